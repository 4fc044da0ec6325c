/**
 * Where the native Codex binary behind a pane's `codex` command is, for the profile's `codex-linux-sandbox`
 * alias (cliProfiles.ts says why it needs one).
 *
 * Codex is one Rust binary that acts as its Linux sandbox helper when started under the name
 * `codex-linux-sandbox` (its "arg0" dispatch), so the alias must be that very binary: the outer and inner
 * stages of its sandbox talk in arguments that change between versions. The `codex` on PATH is either that
 * binary (the standalone installer, Homebrew, a cargo build) or the npm package's Node launcher
 * (@openai/codex, bin/codex.js), which runs the binary of the platform package it depends on
 * (@openai/codex-<platform>-<arch>); each of that package's targets describes itself in
 * vendor/<target>/codex-package.json, whose `entrypoint` is the binary.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { findOnPath } from '../base/pathLookup.js';

/** The npm package whose launcher runs the native binary. */
const NPM_PACKAGE = '@openai/codex';

/**
 * The native Codex binary that `codex` on `env`'s PATH runs, or null: not on PATH, not Linux (the helper
 * alias is Linux's alone), or a launcher this does not know.
 */
export function codexNativeBinary(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, arch: string = process.arch): string | null {
  if (platform !== 'linux') return null;
  const found = findOnPath('codex', env);
  if (!found) return null;
  let real: string;
  try {
    real = realpathSync(found);
  } catch {
    return null;
  }
  return isElf(real) ? real : npmPackageBinary(real, platform, arch);
}

/** The binary the npm launcher at `launcher` (<package>/bin/codex.js) runs, found where the launcher looks. */
function npmPackageBinary(launcher: string, platform: string, arch: string): string | null {
  const root = dirname(dirname(launcher));
  if ((readJson(join(root, 'package.json')) as { name?: unknown } | null)?.name !== NPM_PACKAGE) return null;
  const vendors: string[] = [];
  try {
    // The platform package is a dependency of the launcher's package: resolved from the launcher, as it does.
    vendors.push(join(dirname(createRequire(launcher).resolve(`${NPM_PACKAGE}-${platform}-${arch}/package.json`)), 'vendor'));
  } catch {
    // Not installed as its own package: the launcher then looks in its own vendor folder.
  }
  vendors.push(join(root, 'vendor'));
  for (const vendor of vendors) {
    for (const target of entries(vendor)) {
      const entrypoint = (readJson(join(vendor, target, 'codex-package.json')) as { entrypoint?: unknown } | null)?.entrypoint;
      if (typeof entrypoint !== 'string') continue;
      const binary = join(vendor, target, entrypoint);
      if (isElf(binary)) return binary;
    }
  }
  return null;
}

/** Whether `path` is an ELF executable (its first four bytes), not a script. */
function isElf(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
