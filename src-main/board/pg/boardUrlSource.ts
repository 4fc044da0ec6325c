/**
 * Where a host takes the shared board's URL from. The URL is the board's key (its role may read and write
 * every board in the database), so it travels only where other users and the host's own children cannot
 * read it: never argv (/proc/PID/cmdline is readable by every local user, and logs copy command lines), a
 * file only its owner can read, the host's stdin, or the environment, which is read once and removed from
 * the process's environment before anything is started, so no child (the pty host, panes, hooks, verify)
 * inherits it.
 */
import * as fs from 'node:fs';
import { BOARD_URL_ENV, BoardUrlError } from './connection.js';

/** How to pass the URL, for every refusal: the person learns the ways that keep it secret. */
export const BOARD_URL_WAYS = `--board-url-file PATH (a file only you can read: chmod 600), --board-url-stdin (or --board -), or ${BOARD_URL_ENV}`;

/** A URL file is a line, not a dump: anything longer is the wrong file (connection.ts bounds the URL itself). */
const MAX_FILE_BYTES = 8192;

export interface BoardUrlSources {
  /** `--board`'s value: only `-` (read stdin) is taken; a URL there is refused. */
  readonly flag?: string;
  readonly file?: string;
  readonly stdin?: boolean;
  /** FORKBENCH_BOARD_URL as takeBoardUrlFromEnv took it (deleted from the environment at the host's start). */
  readonly fromEnv: string | null;
  /** All of stdin as text (read only when stdin is the source). */
  readonly readStdin: () => Promise<string>;
  /** This process's user id: a file someone else owns is not this person's key. */
  readonly uid?: number;
}

/**
 * The board URL from the one source given, or null (no board: the journal). Throws BoardUrlError, naming the
 * ways to pass it, for a URL in argv, a file others can read, two sources at once, or an empty one.
 */
export async function takeBoardUrl(s: BoardUrlSources): Promise<string | null> {
  const fromEnv = s.fromEnv;
  if (s.flag !== undefined && s.flag !== '-') {
    // The value is not repeated: it is the secret.
    throw new BoardUrlError(`the board's URL may not be given on the command line, where every local user can read it (ps, /proc); pass it with ${BOARD_URL_WAYS}`);
  }
  const stdin = s.stdin === true || s.flag === '-';
  const given = [s.file !== undefined, stdin, fromEnv !== null].filter(Boolean).length;
  if (given > 1) throw new BoardUrlError(`give the board's URL one way, not several: ${BOARD_URL_WAYS}`);
  if (s.file !== undefined) return readUrlFile(s.file, s.uid ?? process.getuid?.() ?? -1);
  if (stdin) return oneLine(await s.readStdin(), 'stdin');
  return fromEnv;
}

/** FORKBENCH_BOARD_URL, read once and deleted from `env` (an empty value counts as not given). */
export function takeBoardUrlFromEnv(env: NodeJS.ProcessEnv): string | null {
  const v = env[BOARD_URL_ENV];
  delete env[BOARD_URL_ENV];
  return v ? v : null;
}

function readUrlFile(path: string, uid: number): string {
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new BoardUrlError(`--board-url-file ${path} is a symbolic link: name the file itself`);
    throw new BoardUrlError(`--board-url-file ${path} cannot be read (${code ?? (err as Error).message})`);
  }
  try {
    // Checked on the open file, so the file judged is the file read.
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new BoardUrlError(`--board-url-file ${path} is not a file`);
    if (uid >= 0 && st.uid !== uid) throw new BoardUrlError(`--board-url-file ${path} belongs to another user (uid ${st.uid}): the board's key must be yours alone`);
    if (st.mode & 0o077) {
      throw new BoardUrlError(`--board-url-file ${path} can be read or written by others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}): make it yours alone with chmod 600 ${path}`);
    }
    if (st.size > MAX_FILE_BYTES) throw new BoardUrlError(`--board-url-file ${path} is ${st.size} bytes: it should hold one URL`);
    return oneLine(fs.readFileSync(fd, 'utf8'), path);
  } finally {
    fs.closeSync(fd);
  }
}

/** The URL in a file or on stdin: its one line, without the newline an editor or `echo` adds. */
function oneLine(text: string, from: string): string {
  const url = text.trim();
  if (!url) throw new BoardUrlError(`the board's URL from ${from} is empty`);
  if (/[\r\n]/.test(url)) throw new BoardUrlError(`the board's URL from ${from} is more than one line: it should hold one URL`);
  return url;
}
