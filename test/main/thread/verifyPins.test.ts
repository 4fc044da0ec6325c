import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedPins, pinnedPaths, restorePins } from '../../../src-main/thread/verifyPins.js';
import { gitSync, makeRepo } from '../../helpers/gitFixture.js';

describe('the files verify runs', () => {
  it('are the paths its command names, an option’s value too, and the Thread’s list; expansions name none', () => {
    expect(pinnedPaths(`sh ./check.sh && npx vitest --config='vitest.ci.ts' tests/ | tee "$OUT"; bash scripts/*.sh`, ['package.json', '.github/workflows/'])).toEqual({
      named: ['sh', 'check.sh', 'npx', 'vitest', 'vitest.ci.ts', 'tests', 'tee', 'bash'],
      listed: ['package.json', '.github/workflows'],
    });
    expect(pinnedPaths('make -C ../elsewhere check /etc/passwd').named).toEqual(['make', 'check']);
  });

  it('a change to one, committed or only on disk, is found; the base’s copies are put back, bytes and mode', async () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-pins-'));
    try {
      makeRepo(dir, { 'check.sh': 'test ! -f bad\n', 'notes.txt': 'n\n' });
      fs.mkdirSync(join(dir, 'ci'));
      fs.writeFileSync(join(dir, 'ci', 'conf'), 'strict\n');
      fs.chmodSync(join(dir, 'check.sh'), 0o755);
      gitSync(dir, ['add', '-A']);
      gitSync(dir, ['commit', '-qm', 'exec bit']);
      const base = gitSync(dir, ['rev-parse', 'HEAD']);
      gitSync(dir, ['checkout', '-qb', 'work']);
      fs.writeFileSync(join(dir, 'notes.txt'), 'changed, but verify does not run it\n');
      gitSync(dir, ['commit', '-qam', 'notes']);
      // `test -f new.txt` names a file the base lacks: the work may add it.
      const pins = pinnedPaths('test -f new.txt || sh check.sh', ['ci']);
      fs.writeFileSync(join(dir, 'new.txt'), 'added by the work\n');
      gitSync(dir, ['add', 'new.txt']);
      gitSync(dir, ['commit', '-qm', 'new']);
      expect(await changedPins(dir, 'main', base, gitSync(dir, ['rev-parse', 'HEAD']), pins)).toEqual({ files: [], diff: '' });
      // Only on disk: the folder is what runs.
      fs.writeFileSync(join(dir, 'ci', 'conf'), 'lax\n');
      expect((await changedPins(dir, 'main', base, gitSync(dir, ['rev-parse', 'HEAD']), pins)).files).toEqual(['ci/conf']);
      fs.writeFileSync(join(dir, 'check.sh'), 'exit 0\n');
      gitSync(dir, ['commit', '-qam', 'loosen']);
      const head = gitSync(dir, ['rev-parse', 'HEAD']);
      const found = await changedPins(dir, 'main', base, head, pins);
      expect(found.files).toEqual(['check.sh', 'ci/conf']);
      expect(found.diff).toContain('+exit 0');
      // Both were committed (`commit -a`): both are put back.
      expect(await restorePins(dir, base, head, pins)).toEqual(['check.sh', 'ci/conf']);
      expect(fs.readFileSync(join(dir, 'ci', 'conf'), 'utf8')).toBe('strict\n');
      expect(fs.readFileSync(join(dir, 'check.sh'), 'utf8')).toBe('test ! -f bad\n');
      expect(fs.statSync(join(dir, 'check.sh')).mode & 0o777).toBe(0o755);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
