import * as fs from 'node:fs';
import * as net from 'node:net';

/**
 * The pty host's socket may only be ours: the board host it adopts can type into every agent and read their
 * screens. So its folder is 0700 and the socket 0600, both owned by us; anything else is refused, never
 * repaired or removed. (That keeps other users out; the pty host itself tells its board host from its own
 * agents, which run as us: ptyHostServer.ts.)
 */

const myUid = () => process.getuid?.() ?? null;

export class UnsafeSocketError extends Error {}

/** Make (or accept) the owner-only folder. An existing folder that is not ours is refused. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkPrivateDir(dir, true);
}

/** Throws UnsafeSocketError unless `dir` is a plain folder of ours with mode 0700. With `fix`, a folder of
 *  ours that is merely too open is closed to 0700 (we made it; a umask may have widened it). */
export function checkPrivateDir(dir: string, fix = false): void {
  const st = fs.lstatSync(dir);
  const uid = myUid();
  if (!st.isDirectory() || st.isSymbolicLink()) throw new UnsafeSocketError(`${dir} is not a plain folder; refusing to use a pty host there`);
  if (uid !== null && st.uid !== uid) throw new UnsafeSocketError(`${dir} belongs to uid ${st.uid}, not to you (${uid}); refusing to use a pty host there`);
  if ((st.mode & 0o777) !== 0o700) {
    if (!fix) throw new UnsafeSocketError(`${dir} has mode ${octal(st.mode)}, not 0700: others could reach the pty host's socket; refusing it (chmod 700 it if it is yours)`);
    fs.chmodSync(dir, 0o700);
  }
}

/** Throws UnsafeSocketError unless `path` is a socket of ours with mode 0600 in a private folder;
 *  ENOENT (no socket) is thrown as is. */
export function checkSocket(dir: string, path: string): void {
  checkPrivateDir(dir);
  const st = fs.lstatSync(path);
  const uid = myUid();
  if (!st.isSocket()) throw new UnsafeSocketError(`${path} is not a socket; refusing it (remove it if it is yours)`);
  if (uid !== null && st.uid !== uid) throw new UnsafeSocketError(`the pty host socket ${path} belongs to uid ${st.uid}, not to you (${uid}); refusing to connect`);
  if ((st.mode & 0o777) !== 0o600) throw new UnsafeSocketError(`the pty host socket ${path} has mode ${octal(st.mode)}, not 0600; refusing to connect`);
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** Whether something listens on the socket (a refused or missing socket is stale). */
export function socketLive(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.createConnection(path);
    const done = (live: boolean) => {
      clearTimeout(timer);
      c.destroy();
      resolve(live);
    };
    // A listener too busy to accept within a second is alive all the same: do not delete its socket.
    const timer = setTimeout(() => done(true), timeoutMs);
    c.once('connect', () => done(true));
    c.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT'));
  });
}
