import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';

/** The file in a data folder that names its host on shared boards. */
const HOST_ID_FILE = 'host-id';
const HOST_ID = /^[0-9a-f-]{36}$/;

/**
 * This host's id on shared boards: made once per data folder and kept, so a host that restarts is the same
 * host (its kept agents are still its own) while another data folder, on this machine or another, is another
 * host. The machine's name is shown beside it but is no identity: two machines may share one.
 */
export function hostIdOf(dataRoot: string): string {
  const path = join(dataRoot, HOST_ID_FILE);
  try {
    const id = fs.readFileSync(path, 'utf8').trim();
    if (HOST_ID.test(id)) return id;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataRoot, { recursive: true, mode: 0o700 });
  const id = randomUUID();
  // Written whole or not at all: a torn id would make this host a stranger to its own agents.
  const tmp = `${path}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${id}\n`, { mode: 0o600 });
  fs.renameSync(tmp, path);
  return id;
}
