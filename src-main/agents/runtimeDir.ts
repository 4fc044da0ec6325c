import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The per-user folder that holds the agents' sockets. Only its owner may enter it (0700), so no other local
 * user can even reach a socket to try a secret. On Linux $XDG_RUNTIME_DIR is already such a folder; else a
 * folder in the temp dir named for the uid. An existing folder with the wrong owner or mode is refused:
 * another user could have created it first to watch or replace our sockets.
 */
export function runtimeDir(base = process.env.XDG_RUNTIME_DIR): string {
  const uid = process.getuid?.() ?? 0;
  const dir = base ? join(base, 'forkbench') : join(tmpdir(), `forkbench-${uid}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.isSymbolicLink()) throw new Error(`${dir} is not a plain folder; remove it and start again`);
  if (process.getuid && st.uid !== uid) throw new Error(`${dir} belongs to uid ${st.uid}, not to you (${uid}); refusing to put sockets there`);
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
  return dir;
}
