/**
 * The tiers are rules on folders and names (test/setup/tiers.ts), so a file another change adds falls into one
 * without an edit: every test file of the suite falls into exactly one tier, and the rules put each kind of
 * file where they say.
 */
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { minimatch } from 'minimatch';
import { describe, expect, it } from 'vitest';
import { TIERS, type TierName } from '../setup/tiers.js';

const ROOT = join(import.meta.dirname, '..', '..');

const testFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, p).split('\\').join('/')] : [];
  });

const tiersOf = (file: string): TierName[] =>
  (Object.keys(TIERS) as TierName[]).filter((name) => {
    const t = TIERS[name];
    return t.include.some((g) => minimatch(file, g)) && !t.exclude.some((g) => minimatch(file, g));
  });

describe('test tiers', () => {
  it('put every test file of the suite in exactly one tier', () => {
    const files = [...testFiles(join(ROOT, 'test')), ...testFiles(join(ROOT, 'e2e'))];
    expect(files.length).toBeGreaterThan(200);
    const wrong = files.map((f) => ({ f, tiers: tiersOf(f) })).filter((x) => x.tiers.length !== 1);
    expect(wrong).toEqual([]);
  });

  it('place a file by its folder and name', () => {
    expect(tiersOf('e2e/someWindow.e2e.test.ts')).toEqual(['e2e']);
    expect(tiersOf('test/shared/board/anything.test.ts')).toEqual(['unit']);
    expect(tiersOf('test/renderer/components/anything.test.ts')).toEqual(['unit']);
    expect(tiersOf('test/main/board/pureLogic.unit.test.ts')).toEqual(['unit']);
    expect(tiersOf('test/main/host/anything.test.ts')).toEqual(['int']);
    expect(tiersOf('test/main/board/journal.crash.soak.test.ts')).toEqual(['soak']);
    expect(tiersOf('test/main/git/fenceChaosHosts.test.ts')).toEqual(['soak']);
    expect(tiersOf('test/shared/board/reducer.model.test.ts')).toEqual(['soak']);
    expect(tiersOf('test/main/serve/serve.fuzz.test.ts')).toEqual(['soak']);
  });
});
