import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexNativeBinary } from '../../../src-main/agents/codexNative.js';

/** The first bytes of an ELF executable: what the lookup tells a binary from a launcher script by. */
const ELF = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
const TARGET = 'x86_64-unknown-linux-musl';
const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('codexNativeBinary: the binary behind the `codex` on PATH', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'fb-codex-native-'));
    dirs.push(d);
    return d;
  };
  const write = (path: string, content: string | Buffer) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content, { mode: 0o755 });
  };

  /** An npm install as npm lays it out: the launcher package, its platform package, and node_modules/.bin. */
  function npmInstall(options: { platformPackage?: boolean; entrypoint?: string } = {}) {
    const modules = join(tmp(), 'node_modules');
    const launcher = join(modules, '@openai', 'codex', 'bin', 'codex.js');
    write(join(modules, '@openai', 'codex', 'package.json'), JSON.stringify({ name: '@openai/codex', bin: { codex: 'bin/codex.js' } }));
    write(launcher, '#!/usr/bin/env node\n');
    // The platform package, or (without one) the launcher's own vendor folder.
    const vendor = options.platformPackage === false ? join(modules, '@openai', 'codex', 'vendor') : join(modules, '@openai', 'codex-linux-x64', 'vendor');
    if (options.platformPackage !== false) write(join(modules, '@openai', 'codex-linux-x64', 'package.json'), JSON.stringify({ name: '@openai/codex', version: '1.0.0-linux-x64' }));
    const entrypoint = options.entrypoint ?? 'bin/codex';
    write(join(vendor, TARGET, 'codex-package.json'), JSON.stringify({ layoutVersion: 1, target: TARGET, entrypoint }));
    write(join(vendor, TARGET, entrypoint), ELF);
    mkdirSync(join(modules, '.bin'));
    symlinkSync('../@openai/codex/bin/codex.js', join(modules, '.bin', 'codex'));
    return { PATH: `/nonexistent:${join(modules, '.bin')}`, binary: join(vendor, TARGET, entrypoint) };
  }

  it('an npm install: the entrypoint its platform package names for its target', () => {
    const { PATH, binary } = npmInstall();
    expect(codexNativeBinary({ PATH }, 'linux', 'x64')).toBe(binary);
    // Another machine's package is not this one's.
    expect(codexNativeBinary({ PATH }, 'linux', 'arm64')).toBeNull();
  });

  it('an npm install that carries its binaries itself, wherever its manifest puts the entrypoint', () => {
    const { PATH, binary } = npmInstall({ platformPackage: false, entrypoint: 'codex/codex' });
    expect(codexNativeBinary({ PATH }, 'linux', 'x64')).toBe(binary);
  });

  it('a standalone install: `codex` is the binary (through its links)', () => {
    const dir = tmp();
    write(join(dir, 'releases', '1.0', 'codex'), ELF);
    mkdirSync(join(dir, 'bin'));
    symlinkSync(join(dir, 'releases', '1.0', 'codex'), join(dir, 'bin', 'codex'));
    expect(codexNativeBinary({ PATH: join(dir, 'bin') }, 'linux', 'x64')).toBe(join(dir, 'releases', '1.0', 'codex'));
  });

  it('nothing for a script it does not know, a launcher whose binary is missing, no codex, or not Linux', () => {
    const dir = tmp();
    write(join(dir, 'bin', 'codex'), '#!/bin/sh\nexec something-else "$@"\n');
    expect(codexNativeBinary({ PATH: join(dir, 'bin') }, 'linux', 'x64')).toBeNull();
    const { PATH, binary } = npmInstall();
    rmSync(binary);
    expect(codexNativeBinary({ PATH }, 'linux', 'x64')).toBeNull();
    expect(codexNativeBinary({ PATH: '/nonexistent' }, 'linux', 'x64')).toBeNull();
    expect(codexNativeBinary({ PATH: npmInstall().PATH }, 'darwin', 'arm64')).toBeNull();
  });

  // The installed devDependency: the lookup knows the layout of the Codex this project tests with.
  it.runIf(process.platform === 'linux' && (process.arch === 'x64' || process.arch === 'arm64'))('the installed @openai/codex: its platform package\'s binary', () => {
    const binary = codexNativeBinary({ PATH: join(ROOT, 'node_modules', '.bin') });
    expect(binary).toMatch(new RegExp(`node_modules/@openai/codex-linux-${process.arch}/vendor/[^/]+-unknown-linux-musl/bin/codex$`));
  });
});
