import { describe, expect, it } from 'vitest';
import { classifyPatch, fileLineIndex, fileStatusLabel } from '../../../src-renderer/state/patchLines.js';

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

describe('fileStatusLabel', () => {
  it('labels git file statuses', () => {
    expect(fileStatusLabel('M')).toBe('modified');
    expect(fileStatusLabel('R100')).toBe('renamed');
    expect(fileStatusLabel('X')).toBe('X');
  });
});
