// The browser the tests and the bench drive when the machine has none: the headless Chromium that the npm
// package @sparticuz/chromium ships inside its tarball (brotli-packed, ~67 MB installed). It installs with
// `npm install` from the npm registry alone, where a tool that downloads its own browser (`playwright
// install`, puppeteer) fails on a machine that reaches only package registries. A Chromium the user has, or
// names, always comes first (findChromium.ts).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { findChromium, type ChromiumResult, type ChromiumSearch } from './findChromium.js';

export const NPM_CHROMIUM = '@sparticuz/chromium';

/** The package's version, or null when it is not installed (a production install, say). Its exports map
 *  hides package.json, so the file is found from its entry point up. */
function npmChromiumVersion(): string | null {
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve(NPM_CHROMIUM));
  } catch {
    return null;
  }
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === NPM_CHROMIUM && pkg.version) return pkg.version;
  }
  return null;
}

/**
 * The package unpacks into os.tmpdir() and trusts any `chromium` it finds there, whole or not. So it unpacks
 * into a folder of its own first, which is renamed into place once complete: a run killed mid-unpack leaves
 * a staging folder nobody trusts, and a later version never runs an earlier one's binary.
 */
async function unpackNpmChromium(version: string): Promise<string> {
  const final = join(tmpdir(), `forkbench-chromium-${version}`);
  const binary = join(final, 'chromium');
  if (fs.existsSync(binary)) return binary;
  const staging = fs.mkdtempSync(join(tmpdir(), `forkbench-chromium-${version}-unpacking-`));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const { default: chromium } = (await import(NPM_CHROMIUM)) as { default: { executablePath(): Promise<string> } };
    const unpacked = await chromium.executablePath();
    if (unpacked !== join(staging, 'chromium')) throw new Error(`${NPM_CHROMIUM} unpacked to ${unpacked}, not into ${staging}`);
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
  try {
    fs.renameSync(staging, final);
  } catch (err) {
    // Another run put a complete one in place first: use it.
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(binary)) throw err;
  }
  return binary;
}

/**
 * The user's Chromium or Chrome if there is one (or the one FORKBENCH_CHROMIUM or CHROME_PATH names, right
 * or wrong), else the npm package's, unpacked on first use (~1.5 s).
 */
export async function chromiumForTests(o: ChromiumSearch = {}): Promise<ChromiumResult> {
  const env = o.env ?? process.env;
  const mine = findChromium(o);
  if (mine.found || env.FORKBENCH_CHROMIUM || env.CHROME_PATH) return mine;
  const version = npmChromiumVersion();
  if (!version) return mine;
  return { found: true, path: await unpackNpmChromium(version), from: `the npm package ${NPM_CHROMIUM}@${version}` };
}

/**
 * chromiumForTests, named in FORKBENCH_CHROMIUM for whatever this process starts or imports next (vitest's
 * workers, the bench's suites), so it is found and unpacked once.
 */
export async function provideChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumResult> {
  const chromium = await chromiumForTests({ env });
  if (chromium.found && !env.FORKBENCH_CHROMIUM && !env.CHROME_PATH) {
    env.FORKBENCH_CHROMIUM = chromium.path;
    if (chromium.from.startsWith('the npm package')) console.log(`browser: ${chromium.from} (${chromium.path})`);
  }
  return chromium;
}
