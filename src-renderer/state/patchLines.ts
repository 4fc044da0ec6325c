/**
 * The patch under review as the window draws it: its lines by kind, where each file starts, and git's file
 * statuses as words. Pure, so it is tested without a DOM.
 */

export type PatchLineKind =
  /** `diff --git a/x b/x`: a new file starts. */
  | 'file'
  /** Lines between a file's start and its first hunk: index, mode, ---/+++ names, "Binary files differ". */
  | 'meta'
  | 'hunk'
  | 'add'
  | 'del'
  | 'context'
  /** "\ No newline at end of file". */
  | 'note';

export interface PatchLine {
  readonly text: string;
  readonly kind: PatchLineKind;
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/**
 * Classify a unified diff line by line. Inside a hunk the header's line counts decide where it ends, so a
 * removed line reading "-- x" (shown as "--- x") or an added "++ y" is still a change, not a file name; a
 * first character alone cannot tell them apart. A patch cut short (TaskDiff.truncated) simply stops.
 */
export function classifyPatch(patch: string): PatchLine[] {
  if (patch === '') return [];
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out: PatchLine[] = [];
  let oldLeft = 0;
  let newLeft = 0;
  for (const text of lines) {
    if (oldLeft > 0 || newLeft > 0) {
      const c = text[0];
      if (c === '+' && newLeft > 0) {
        newLeft--;
        out.push({ text, kind: 'add' });
        continue;
      }
      if (c === '-' && oldLeft > 0) {
        oldLeft--;
        out.push({ text, kind: 'del' });
        continue;
      }
      if (c === '\\') {
        out.push({ text, kind: 'note' });
        continue;
      }
      // A context line; some tools strip its leading space when the line is empty.
      if (c === ' ' || text === '') {
        oldLeft = Math.max(0, oldLeft - 1);
        newLeft = Math.max(0, newLeft - 1);
        out.push({ text, kind: 'context' });
        continue;
      }
      // Counts that do not add up (a hand-edited patch): fall back to reading headers.
      oldLeft = newLeft = 0;
    }
    const h = HUNK.exec(text);
    if (h) {
      oldLeft = h[1] === undefined ? 1 : Number(h[1]);
      newLeft = h[2] === undefined ? 1 : Number(h[2]);
      out.push({ text, kind: 'hunk' });
    } else if (text.startsWith('diff --git ')) out.push({ text, kind: 'file' });
    else if (text.startsWith('\\')) out.push({ text, kind: 'note' });
    else out.push({ text, kind: 'meta' });
  }
  return out;
}

/** Where a file's part of the patch starts (its `diff --git` line), for jumping there from the file list; -1 if
 *  the patch does not show it (cut short, or a name git quoted). */
export function fileLineIndex(lines: readonly PatchLine[], path: string): number {
  const tail = ` b/${path}`;
  return lines.findIndex((l) => l.kind === 'file' && l.text.endsWith(tail));
}

/** Patch lines drawn at first: each is a DOM node, and a generated file can add tens of thousands. */
export const PATCH_PAGE = 2_000;

/** git's one-letter file statuses (R100, C75 carry a similarity score), as a word. */
export function fileStatusLabel(status: string): string {
  switch (status[0]) {
    case 'A':
      return 'added';
    case 'D':
      return 'deleted';
    case 'M':
      return 'modified';
    case 'R':
      return 'renamed';
    case 'C':
      return 'copied';
    case 'T':
      return 'type changed';
    default:
      return status;
  }
}
