import { dataLockPath, describeHolder, HostLock } from './hostLock.js';

export type DataFolderClaim = { ok: true; lock: HostLock } | { ok: false; message: string };

/**
 * Take the data folder for this host (serve or Electron), or say in one line why not: another live host
 * holds it (and where it is), or the folder cannot hold a lock (read-only). Nothing in the folder is
 * written or removed on refusal, so no board data is lost. Plain Node, so Electron's decision is tested.
 */
export function claimDataFolder(dataRoot: string, kind: string): DataFolderClaim {
  let got: ReturnType<typeof HostLock.acquire>;
  try {
    got = HostLock.acquire(dataLockPath(dataRoot), { kind });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'EROFS' || e.code === 'EACCES' || e.code === 'EPERM' ? `it is read-only for you (${e.code})` : e.message;
    return { ok: false, message: `cannot lock the data folder ${dataRoot}: ${why}; nothing was opened or changed` };
  }
  if (got.ok) return got;
  return { ok: false, message: `another Forkbench host already uses the data folder ${dataRoot}: ${describeHolder(got.holder)}; open that one, or stop it first` };
}
