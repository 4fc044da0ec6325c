import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { _electron as electron } from 'playwright-core';
import { describe, expect, it } from 'vitest';

/** Where Electron's binary is, if this machine has it (it cannot be downloaded everywhere). */
function electronBinary(): string | null {
  const dir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const bin = join(dir, 'dist', readFileSync(pathFile, 'utf8'));
  return existsSync(bin) ? bin : null;
}

const bin = electronBinary();
const ROOT = join(import.meta.dirname, '..');

describe('the Electron shell', () => {
  it('opens a sandboxed Thread window whose page sees only the forkbench API', async (ctx) => {
    if (!bin) ctx.skip('the Electron binary is not on this machine (it cannot be downloaded here); the browser e2e covers the window');
    const app = await electron.launch({ executablePath: bin as string, args: [ROOT, ROOT], cwd: ROOT });
    try {
      const win = await app.firstWindow();
      await win.getByTestId('thread-goal').waitFor({ timeout: 30_000 });
      const exposed = await win.evaluate(() => ({
        api: Object.keys((window as unknown as { forkbench: object }).forkbench).sort(),
        require: typeof (window as unknown as { require?: unknown }).require,
        process: typeof (window as unknown as { process?: unknown }).process,
      }));
      expect(exposed).toEqual({ api: ['call', 'subscribe'], require: 'undefined', process: 'undefined' });
      const prefs = await app.evaluate(({ BrowserWindow }) => {
        const w = BrowserWindow.getAllWindows()[0];
        const p = (w?.webContents as unknown as { getLastWebPreferences(): Record<string, unknown> } | undefined)?.getLastWebPreferences();
        return { sandbox: p?.sandbox, contextIsolation: p?.contextIsolation, nodeIntegration: p?.nodeIntegration };
      });
      expect(prefs).toEqual({ sandbox: true, contextIsolation: true, nodeIntegration: false });
    } finally {
      await app.close();
    }
  });
});
