import { headWritten, mergeVerdict } from '../../src-shared/git/mergeVerdict.js';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { TaskDiff, WorktreeInfo } from '../../src-shared/protocol/windowApi.js';

/**
 * What the window shows of a task's git work: the patch under review, the fencing-token check, the worktree
 * list and the settings fields. Pure, so it is tested without a DOM.
 */

// ------------------------------------------------------------------ patch

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

// ------------------------------------------------------------------ review checks

export interface TokenCheck {
  readonly ok: boolean;
  readonly message: string;
}

/**
 * What Approve will do, said before the person clicks it: the host's own merge rule (src-shared/git/
 * mergeVerdict), on the facts the diff carries.
 */
export function tokenCheck(d: Pick<TaskDiff, 'taskId' | 'headToken' | 'headTask' | 'finalToken' | 'commits' | 'branch'>): TokenCheck {
  const v = mergeVerdict(d);
  if (v.ok && !v.merges) return { ok: true, message: `${d.branch} has no commits of its own: approving merges nothing.` };
  if (v.ok) return { ok: true, message: `Head committed under token ${d.headToken}, the claim under review.` };
  if (v.why === 'no-claim') return { ok: false, message: 'No claim is on record for this review, so the head cannot be checked; approve will refuse.' };
  return { ok: false, message: `The head commit was ${headWritten(d)}, but the work under review is token ${d.finalToken}. Approve will refuse.` };
}

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

// ------------------------------------------------------------------ worktrees

export type WorktreeStatus = 'held' | 'parked' | 'missing';

/** A missing folder is said first: whether a claim holds it or not, there is nothing on disk to work in. */
export function worktreeStatus(w: Pick<WorktreeInfo, 'held' | 'missing'>): WorktreeStatus {
  if (w.missing) return 'missing';
  return w.held ? 'held' : 'parked';
}

/** Only a worktree no live claim works in may be removed: pulling one out from under an agent loses work. */
export const canRemoveWorktree = (w: Pick<WorktreeInfo, 'held'>): boolean => !w.held;

/** Board events after which the worktree list may read differently (made, removed, held or let go). */
const WORKTREE_KINDS: ReadonlySet<BoardEvent['kind']> = new Set(['worktree-set', 'worktree-removed', 'grant', 'claim-ended', 'approved']);

export function changesWorktrees(kind: BoardEvent['kind']): boolean {
  return WORKTREE_KINDS.has(kind);
}

// ------------------------------------------------------------------ settings fields

/** The "Base branch" field: empty means the folder's current branch, which the board spells null. */
export function parseBaseBranch(text: string): string | null {
  const t = text.trim();
  return t === '' ? null : t;
}

/** The "Copy into worktrees" field: names separated by commas or new lines, blanks and repeats dropped. */
export function parseCopyFiles(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[,\n]/)) {
    const t = part.trim();
    if (t) seen.add(t);
  }
  return [...seen];
}

export const formatCopyFiles = (files: readonly string[]): string => files.join(', ');
