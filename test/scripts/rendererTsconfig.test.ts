import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Type-checks one file under a config that extends tsconfig.renderer.json; returns tsc's output. */
function checkUnderRendererConfig(source: string): { status: number | null; out: string } {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-tsconfig-'));
  try {
    fs.writeFileSync(join(dir, 'probe.ts'), source);
    fs.writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(ROOT, 'tsconfig.renderer.json'), include: ['probe.ts'] }));
    const r = spawnSync(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('tsconfig.renderer.json: the window is type-checked with the DOM and without Node', () => {
  it('covers src-renderer and src-shared, with no automatic @types', () => {
    const cfg = JSON.parse(fs.readFileSync(join(ROOT, 'tsconfig.renderer.json'), 'utf8'));
    expect(cfg.compilerOptions.types).toEqual([]);
    expect(cfg.compilerOptions.lib).toContain('DOM');
    expect(cfg.include).toEqual(expect.arrayContaining(['src-renderer', 'src-shared']));
    expect(JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.typecheck).toContain('tsc -p tsconfig.renderer.json');
  });

  it('rejects Node types and accepts the DOM', () => {
    const node = checkUnderRendererConfig('export const t: NodeJS.Timeout | undefined = undefined;\nexport const e = process.env.HOME;\n');
    expect(node.status).not.toBe(0);
    expect(node.out).toMatch(/Cannot find namespace 'NodeJS'/);
    expect(node.out).toMatch(/Cannot find name 'process'/);
    const dom = checkUnderRendererConfig('export const t: ReturnType<typeof setTimeout> = setTimeout(() => {}, 1);\nexport const title = document.title;\n');
    expect(dom).toEqual({ status: 0, out: '' });
  });
});
