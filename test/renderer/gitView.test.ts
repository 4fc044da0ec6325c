import { describe, expect, it } from 'vitest';
import {
  canRemoveWorktree,
  changesWorktrees,
  classifyPatch,
  fileLineIndex,
  fileStatusLabel,
  formatCopyFiles,
  parseBaseBranch,
  parseCopyFiles,
  tokenCheck,
  worktreeStatus,
} from '../../src-renderer/state/gitView.js';

const PATCH = [
  'diff --git a/src/a.ts b/src/a.ts',
  'index 1111111..2222222 100644',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1,4 +1,4 @@',
  ' const a = 1;',
  '--- a comment that began with two dashes',
  '+++ a line that begins with two pluses',
  '',
  ' end',
  'diff --git a/new.txt b/new.txt',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/new.txt',
  '@@ -0,0 +1 @@',
  '+hello',
  '\\ No newline at end of file',
  'diff --git a/logo.png b/logo.png',
  'Binary files a/logo.png and b/logo.png differ',
  '',
].join('\n');

describe('classifyPatch', () => {
  it('tells file headers from changed lines by the hunk counts, not the first character', () => {
    const lines = classifyPatch(PATCH);
    expect(lines.map((l) => l.kind)).toEqual([
      'file',
      'meta',
      'meta',
      'meta',
      'hunk',
      'context',
      'del', // "--- a comment…" inside the hunk is a removed "-- a comment…"
      'add',
      'context', // an empty context line whose space was stripped
      'context',
      'file',
      'meta',
      'meta',
      'meta',
      'hunk',
      'add',
      'note',
      'file',
      'meta',
    ]);
    expect(lines.at(-1)!.text).toBe('Binary files a/logo.png and b/logo.png differ');
  });

  it('reads nothing from an empty patch, and survives one cut short mid-hunk', () => {
    expect(classifyPatch('')).toEqual([]);
    const cut = classifyPatch('diff --git a/x b/x\n@@ -1,10 +1,10 @@\n-old\n+new');
    expect(cut.map((l) => l.kind)).toEqual(['file', 'hunk', 'del', 'add']);
  });

  it('falls back to headers when a hunk holds fewer lines than it said', () => {
    const lines = classifyPatch('@@ -1,5 +1,5 @@\n-a\n+b\ndiff --git a/y b/y\n@@ -1 +1 @@\n-c\n+d');
    expect(lines.map((l) => l.kind)).toEqual(['hunk', 'del', 'add', 'file', 'hunk', 'del', 'add']);
  });

  it('finds where a file starts in the patch', () => {
    const lines = classifyPatch(PATCH);
    expect(fileLineIndex(lines, 'new.txt')).toBe(10);
    expect(fileLineIndex(lines, 'src/a.ts')).toBe(0);
    expect(fileLineIndex(lines, 'absent.ts')).toBe(-1);
  });
});

describe('tokenCheck', () => {
  const base = { taskId: 'T-3', headTask: 'T-3', branch: 'forkbench/T-3', commits: 2 };
  it('passes only when the head was committed under the claim under review', () => {
    expect(tokenCheck({ ...base, headToken: 7, finalToken: 7 })).toEqual({ ok: true, message: 'Head committed under token 7, the claim under review.' });
    const stale = tokenCheck({ ...base, headToken: 5, finalToken: 7 });
    expect(stale.ok).toBe(false);
    expect(stale.message).toContain('token 5');
    expect(stale.message).toContain('Approve will refuse');
    expect(tokenCheck({ ...base, headToken: null, finalToken: 7 }).ok).toBe(false);
    expect(tokenCheck({ ...base, headToken: 7, finalToken: null }).ok).toBe(false);
  });

  it('says when the branch has nothing to merge: approve approves without a merge, as the host does', () => {
    const c = tokenCheck({ ...base, commits: 0, headToken: null, finalToken: 7 });
    expect(c).toEqual({ ok: true, message: 'forkbench/T-3 has no commits of its own: approving merges nothing.' });
  });

  it('refuses a head written for another task under the same token number, as the host does', () => {
    const c = tokenCheck({ ...base, headTask: 'T-2', headToken: 7, finalToken: 7 });
    expect(c.ok).toBe(false);
    expect(c.message).toBe('The head commit was written under token 7 of T-2, but the work under review is token 7. Approve will refuse.');
  });
});

describe('worktree list', () => {
  it('names a worktree held, parked or missing, and lets only unheld ones go', () => {
    expect(worktreeStatus({ held: true, missing: false })).toBe('held');
    expect(worktreeStatus({ held: false, missing: false })).toBe('parked');
    expect(worktreeStatus({ held: true, missing: true })).toBe('missing');
    expect(canRemoveWorktree({ held: false })).toBe(true);
    expect(canRemoveWorktree({ held: true })).toBe(false);
  });

  it('refreshes on the events that make, remove, hold or let go of one', () => {
    for (const k of ['worktree-set', 'worktree-removed', 'grant', 'claim-ended', 'approved'] as const) expect(changesWorktrees(k)).toBe(true);
    for (const k of ['note', 'renew', 'goal-set'] as const) expect(changesWorktrees(k)).toBe(false);
  });

  it('labels git file statuses', () => {
    expect(fileStatusLabel('M')).toBe('modified');
    expect(fileStatusLabel('R100')).toBe('renamed');
    expect(fileStatusLabel('X')).toBe('X');
  });
});

describe('settings fields', () => {
  it('reads an empty base branch as the current one (null)', () => {
    expect(parseBaseBranch('  ')).toBeNull();
    expect(parseBaseBranch(' develop ')).toBe('develop');
  });

  it('reads files to copy separated by commas or new lines, without blanks or repeats', () => {
    expect(parseCopyFiles('.env, config/local.json\n.env.local,,\n .env ')).toEqual(['.env', 'config/local.json', '.env.local']);
    expect(parseCopyFiles('')).toEqual([]);
    expect(formatCopyFiles(['.env', 'a/b'])).toBe('.env, a/b');
  });
});
