/**
 * The files a verify command runs are the person's check, not the work's (issue 42, item 3): an agent whose
 * commit replaced `check.sh` with `exit 0` passed its own verify and landed. The files the command names (its
 * words that are paths: `sh check.sh` names check.sh) and those the Thread lists (`verifyFiles`: package.json,
 * CI config, a folder) are taken from the base: a task that changes one is not approved by verify (it waits for
 * a person, the change shown), and the merge queue puts the base's copies back before it checks a merge.
 */
import { chmod, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { git } from '../git/git.js';

/** Pathspecs taken as they are written: a word of a command (`[`, `*.sh`) names that path, no pattern. */
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };

/** Shell syntax between words; quotes are dropped, so `'check.sh'` and `"./check.sh"` name check.sh. */
const SEPARATORS = /[\s;&|()<>`]+/;
/** A word with expansions (`$X`, globs, `~`) names no file that can be read off it. */
const EXPANDS = /[$*?[\]{}~\\]/;

/** What verify runs: the words of its command that may be files, and the Thread's list (files or folders). */
export interface Pins {
  named: readonly string[];
  listed: readonly string[];
}

/**
 * The paths (relative to the folder verify runs in) a verify command names, with the Thread's own list: each
 * word of the command, an option's value after `=`, cleaned of quotes and `./`. Which words are the check's
 * files is for the base to say (pinsAt): `sh`, `npm`, or the `one.txt` of `test -f one.txt` that the work is
 * to add, are not.
 */
export function pinnedPaths(command: string, listed: readonly string[] = []): Pins {
  const named = words(command);
  return { named, listed: listed.map(clean).filter((p): p is string => p !== null) };
}

function clean(raw: string): string | null {
  const p = posix.normalize(raw.replace(/['"]/g, '')).replace(/\/+$/, '');
  return !p || p === '.' || p.startsWith('/') || p.startsWith('../') || p === '..' || EXPANDS.test(p) ? null : p;
}

function words(command: string): string[] {
  const out = new Set<string>();
  const add = (raw: string) => {
    const p = clean(raw);
    if (p !== null) out.add(p);
  };
  for (const word of command.split(SEPARATORS)) {
    if (!word) continue;
    if (word.startsWith('-')) {
      const eq = word.indexOf('=');
      if (eq > 0) add(word.slice(eq + 1));
      continue;
    }
    add(word);
  }
  return [...out];
}

/** The pinned paths as of `rev`: each named word that is a file there (a folder a command names, like the
 *  tests it runs, is the work's to add to), and everything the Thread lists. */
async function pinsAt(cwd: string, rev: string, pins: Pins): Promise<string[]> {
  const files = await filesAt(cwd, rev, pins.named);
  return [...new Set([...pins.named.filter((w) => files.has(w)), ...pins.listed])];
}

/** Blob id and mode of each file at or below `paths` in `rev`, by path (relative to `cwd`). */
async function filesAt(cwd: string, rev: string, paths: readonly string[]): Promise<Map<string, { mode: string; id: string }>> {
  const files = new Map<string, { mode: string; id: string }>();
  if (paths.length === 0) return files;
  const r = await git(cwd, ['ls-tree', '-r', '-z', rev, '--', ...paths], { env: LITERAL });
  for (const entry of r.stdout.split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const [mode = '', type, id = ''] = entry.slice(0, tab).split(' ');
    if (type === 'blob') files.set(entry.slice(tab + 1), { mode, id });
  }
  return files;
}

/** The blob ids git would give the files as they are on disk now (no filters: what runs is the bytes). */
async function onDisk(cwd: string, paths: readonly string[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  const present: string[] = [];
  const r = await git(cwd, ['ls-files', '-z', '--cached', '--others', '--', ...paths], { env: LITERAL });
  for (const p of r.stdout.split('\0')) if (p) present.push(p);
  if (present.length === 0) return ids;
  const h = await git(cwd, ['hash-object', '--no-filters', '--', ...present], { allowFail: true });
  h.stdout
    .trim()
    .split('\n')
    .forEach((id, i) => id && ids.set(present[i]!, id));
  return ids;
}

export interface PinChanges {
  /** The pinned files the work changes, sorted: in its commit or, uncommitted, in its folder. */
  files: string[];
  /** The commit's change to them, as `git diff` shows it (for the person). */
  diff: string;
}

/**
 * Which pinned files the work at `sha` (in its folder `cwd`) changes from where it left the branch `base`
 * (their merge base, so the base moving on is no change of the work's). Also what is on disk: verify runs the folder's
 * files, committed or not.
 */
export async function changedPins(cwd: string, base: string, baseCommit: string, sha: string, pins: Pins): Promise<PinChanges> {
  // A base branch gone since (renamed, deleted) leaves the commit the work started from.
  const from = (await git(cwd, ['merge-base', base, sha], { allowFail: true })).stdout.trim() || baseCommit;
  const paths = await pinsAt(cwd, from, pins);
  if (paths.length === 0) return { files: [], diff: '' };
  const [before, after, disk] = await Promise.all([filesAt(cwd, from, paths), filesAt(cwd, sha, paths), onDisk(cwd, paths)]);
  const changed = new Set<string>();
  for (const p of new Set([...before.keys(), ...after.keys(), ...disk.keys()])) {
    const was = before.get(p);
    const now = after.get(p);
    if (was?.id !== now?.id || was?.mode !== now?.mode || was?.id !== disk.get(p)) changed.add(p);
  }
  const files = [...changed].sort();
  if (files.length === 0) return { files, diff: '' };
  const d = await git(cwd, ['diff', '--no-color', '--no-ext-diff', '--no-textconv', from, sha, '--', ...files], { allowFail: true, env: LITERAL });
  return { files, diff: d.stdout };
}

/**
 * Put the pinned files of a checkout (`cwd`, at `head`) back as they are in `base`: the base's bytes and
 * mode, and a pinned file the base lacks removed. Written from git's objects, never through a checkout's
 * filters or hooks (`.gitattributes` is the work's too), and read as text: verify's scripts and config are.
 */
export async function restorePins(cwd: string, base: string, head: string, pins: Pins): Promise<string[]> {
  const paths = await pinsAt(cwd, base, pins);
  if (paths.length === 0) return [];
  const [want, have] = await Promise.all([filesAt(cwd, base, paths), filesAt(cwd, head, paths)]);
  const put: string[] = [];
  for (const [p, f] of want) {
    if (have.get(p)?.id === f.id && have.get(p)?.mode === f.mode) continue;
    const file = join(cwd, p);
    await rm(file, { recursive: true, force: true });
    await mkdir(dirname(file), { recursive: true });
    const blob = (await git(cwd, ['cat-file', 'blob', f.id])).stdout;
    if (f.mode === '120000') await symlink(blob, file);
    else {
      await writeFile(file, blob);
      await chmod(file, f.mode === '100755' ? 0o755 : 0o644);
    }
    put.push(p);
  }
  for (const p of have.keys()) {
    if (want.has(p)) continue;
    await rm(join(cwd, p), { force: true });
    put.push(p);
  }
  return put.sort();
}
