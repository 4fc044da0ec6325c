import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appRoot, findUp, forkbenchPackage } from '../../../src-main/base/packageRoot.js';
import { APP_ROOT } from '../../../src-main/base/nodeRuntime.js';
import { forkbenchVersion } from '../../../src-main/ptyhost/protocol.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('the package-root walk (base/packageRoot.ts)', () => {
  it('finds this checkout from below, by its package.json and by its bin/forkbench.cjs, as both callers do', () => {
    const version = (JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(forkbenchPackage(join(ROOT, 'src-main', 'ptyhost'))).toEqual({ root: ROOT, version });
    expect(appRoot(join(ROOT, 'dist-main', 'src-main', 'base'))).toBe(ROOT);
    expect(APP_ROOT).toBe(ROOT);
    expect(forkbenchVersion()).toBe(version);
  });

  it('another package above is not Forkbench; no Forkbench above is null or a clear error', () => {
    const top = fs.mkdtempSync(join(tmpdir(), 'forkbench-root-'));
    dirs.push(top);
    const deep = join(top, 'a', 'b', 'c');
    fs.mkdirSync(deep, { recursive: true });
    fs.writeFileSync(join(top, 'a', 'package.json'), JSON.stringify({ name: 'someone-else', version: '9.9.9' }));
    fs.writeFileSync(join(top, 'a', 'b', 'package.json'), '{ not json');
    expect(findUp((d) => fs.existsSync(join(d, 'package.json')), deep)).toBe(join(top, 'a', 'b'));
    expect(forkbenchPackage(deep)).toBeNull();
    expect(() => appRoot(deep)).toThrow(/cannot find the Forkbench folder \(bin\/forkbench\.cjs\) above .*a\/b\/c/);
    expect(findUp(() => false, deep)).toBeNull();
  });
});
