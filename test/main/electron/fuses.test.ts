/**
 * Issue 16: the packaged app's Electron fuses. The Electron binary cannot be downloaded on this project's
 * machines, so the test reads the configuration the way electron-builder itself does (its loader and its
 * schema), and turns the `electronFuses` section into the fuse wire with electron-builder's own code: what
 * `npm run dist` would flip in the binary.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../src-main/thread/cliShim.js';

const require = createRequire(import.meta.url);
// electron-builder's library (a dependency of the electron-builder devDependency). The index first: its
// modules import one another in an order that only the index gets right.
const lib = require('app-builder-lib') as {
  PlatformPackager: { prototype: { generateFuseConfig(fuses: unknown): Promise<Record<string, unknown>> } };
};
const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string): Promise<Record<string, unknown>>;
  validateConfiguration(config: unknown, debug: { isEnabled: boolean; add(): void }): Promise<void>;
};

describe('electron-builder.yml', () => {
  it('is valid for electron-builder and flips the fuses that keep the packaged app from being repurposed', async () => {
    const config = await getConfig(PROJECT_ROOT, join(PROJECT_ROOT, 'electron-builder.yml'));
    await validateConfiguration(config, { isEnabled: false, add: () => undefined });
    const { FuseV1Options } = await import('@electron/fuses');
    const wire = await lib.PlatformPackager.prototype.generateFuseConfig.call({}, config.electronFuses);
    const fuse = (name: keyof typeof FuseV1Options) => wire[String(FuseV1Options[name])];
    expect(fuse('RunAsNode')).toBe(false);
    expect(fuse('EnableNodeOptionsEnvironmentVariable')).toBe(false);
    expect(fuse('EnableNodeCliInspectArguments')).toBe(false);
    expect(fuse('EnableCookieEncryption')).toBe(true);
    expect(fuse('EnableEmbeddedAsarIntegrityValidation')).toBe(true);
    expect(fuse('OnlyLoadAppFromAsar')).toBe(true);
    // Only loading from app.asar needs the app to be in one (electron-builder's default; never turned off).
    expect(config.asar).not.toBe(false);
  });
});
