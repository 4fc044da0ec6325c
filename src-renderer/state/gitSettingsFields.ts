/** The Thread settings' git fields (base branch, files copied into worktrees), read from and written to text. */

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
