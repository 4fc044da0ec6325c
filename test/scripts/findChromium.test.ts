import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium, GET_CHROMIUM, installPaths } from '../../e2e/findChromium.js';

let dir: string;
const p = (name: string) => join(dir, name);
function executable(name: string): string {
  fs.mkdirSync(join(p(name), '..'), { recursive: true });
  fs.writeFileSync(p(name), '#!/bin/sh\n', { mode: 0o755 });
  return p(name);
}

beforeAll(() => {
  dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-chromium-'));
  executable('forkbench-chromium');
  executable('chrome-path');
  executable('usr/bin/chromium-browser');
  executable('usr/bin/google-chrome');
  executable('bin/google-chrome-stable');
  executable('bin2/chromium');
  fs.writeFileSync(p('not-executable'), '', { mode: 0o644 });
  fs.mkdirSync(p('a-directory'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Install paths as the platform list would give them: a missing one first, then two that exist. */
const installs = () => [p('usr/bin/chromium'), p('not-executable'), p('a-directory'), p('usr/bin/chromium-browser'), p('usr/bin/google-chrome')];
const find = (env: NodeJS.ProcessEnv, installPaths: string[] = installs()) => findChromium({ env, platform: 'linux', installPaths });

describe('findChromium: the user’s Chromium or Chrome, in a fixed order', () => {
  it('FORKBENCH_CHROMIUM first, then CHROME_PATH, then the install paths in order, then PATH', () => {
    const PATH = [p('nowhere'), p('bin'), p('bin2')].join(':');
    const all = { FORKBENCH_CHROMIUM: p('forkbench-chromium'), CHROME_PATH: p('chrome-path'), PATH };
    expect(find(all)).toEqual({ found: true, path: p('forkbench-chromium'), from: 'FORKBENCH_CHROMIUM' });
    expect(find({ ...all, FORKBENCH_CHROMIUM: '' })).toEqual({ found: true, path: p('chrome-path'), from: 'CHROME_PATH' });
    // Missing, not executable and a directory are passed over; the first runnable install path wins.
    expect(find({ PATH })).toEqual({ found: true, path: p('usr/bin/chromium-browser'), from: 'install path' });
    // PATH names in their order: chromium before google-chrome-stable, whichever directory comes first.
    expect(find({ PATH }, [])).toEqual({ found: true, path: p('bin2/chromium'), from: 'PATH' });
    expect(find({ PATH: p('bin') }, [])).toEqual({ found: true, path: p('bin/google-chrome-stable'), from: 'PATH' });
  });

  it('a variable that is set is obeyed: pointing at nothing is an error, not a cue to use another browser', () => {
    const r = find({ FORKBENCH_CHROMIUM: p('missing'), CHROME_PATH: p('chrome-path') });
    expect(r.found).toBe(false);
    if (r.found) return;
    expect(r.path).toBe(p('missing'));
    expect(r.problem).toContain(`FORKBENCH_CHROMIUM=${p('missing')} is not a runnable file`);
    expect(find({ CHROME_PATH: p('not-executable') }).found).toBe(false);
  });

  it('a bare name in CHROME_PATH is looked up on PATH', () => {
    expect(find({ CHROME_PATH: 'google-chrome-stable', PATH: p('bin') })).toEqual({
      found: true,
      path: p('bin/google-chrome-stable'),
      from: 'CHROME_PATH',
    });
    expect(find({ CHROME_PATH: 'chromium', PATH: p('bin') }).found).toBe(false);
  });

  it('nothing found is one line that says how to get one', () => {
    const r = find({ PATH: p('nowhere') }, [p('usr/bin/chromium')]);
    expect(r.found).toBe(false);
    if (r.found) return;
    expect(r.problem).not.toContain('\n');
    expect(r.problem).toContain('apt-get install -y chromium');
    expect(r.problem).toContain('CHROME_PATH');
    expect(r.problem).toContain(GET_CHROMIUM);
  });

  it('knows the usual install paths of each platform, Debian’s Chromium first', () => {
    expect(installPaths('linux', {})).toEqual([
      '/usr/bin/chromium',
      '/usr/bin/chromium-browser',
      '/usr/bin/google-chrome',
      '/usr/bin/google-chrome-stable',
      '/snap/bin/chromium',
    ]);
    expect(installPaths('darwin', {}).slice(0, 2)).toEqual([
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
    ]);
    const win = installPaths('win32', { PROGRAMFILES: 'C:\\Program Files', 'PROGRAMFILES(X86)': 'C:\\Program Files (x86)', LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' });
    expect(win).toContain('C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe');
    expect(win).toContain('C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe');
    expect(win).toContain('C:\\Users\\u\\AppData\\Local\\Google\\Chrome\\Application\\chrome.exe');
    expect(win).toContain('C:\\Users\\u\\AppData\\Local\\Chromium\\Application\\chrome.exe');
  });
});
