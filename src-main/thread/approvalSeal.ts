import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { QueueEntry, SealedApproval } from '../../src-shared/board/model.js';
import { writeFileAtomic } from '../base/atomicWrite.js';

/** The file in a host's data folder that holds its approval key: owner-only, never in the board's store. */
export const APPROVAL_KEY_FILE = 'approval.key';
/** 32 bytes: HMAC-SHA256's own block of strength; a guess is no cheaper than forging SHA-256. */
const KEY_BYTES = 32;
/** Domain separation: a MAC made for an approval is never one for anything else this key could sign. */
const CONTEXT = 'forkbench approval v1\n';

/**
 * The person's act on a queue entry (issue 42, item 2). Anyone who can write the board's store (the
 * database role, the journal's folder) can append a `queued` row that says "by user"; what they cannot make
 * is this host's MAC over it, because the key lives only in the host's data folder, never in the store. An
 * approval is sealed when the window (or verify, which the person set up) asks this host to queue it, and
 * the merge queue lands only entries whose seal holds. While agents run as the person's own uid with the
 * data folder in reach, an agent that reads this file can still seal (the sandbox issue closes that): the
 * seal closes the door of the store's URL, not of the uid.
 */
export class ApprovalSeal {
  private constructor(private readonly key: Buffer) {}

  /** The host's key in `dataDir`, made on first use (created exclusively, so two hosts starting at once
   *  on one folder agree on one key). */
  static open(dataDir: string): ApprovalSeal {
    const path = join(dataDir, APPROVAL_KEY_FILE);
    const read = (): Buffer | null => {
      try {
        return Buffer.from(fs.readFileSync(path, 'utf8').trim(), 'hex');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    };
    let key = read();
    if (!key) {
      // Written whole under a temp name, then linked into place only if no key is there: a reader never
      // sees half a key, and a key another host made first wins.
      const tmp = `${path}.${process.pid}.new`;
      writeFileAtomic(tmp, randomBytes(KEY_BYTES).toString('hex'), { mode: 0o600, durable: true });
      try {
        fs.linkSync(tmp, path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      key = read();
    }
    if (!key || key.length !== KEY_BYTES) throw new Error(`${path} does not hold an approval key (${KEY_BYTES} bytes as hex): remove it and the host makes a new one (approvals waiting in the merge queue must then be made again)`);
    return new ApprovalSeal(key);
  }

  /** A key of its own, in memory: a model test's host. */
  static ephemeral(): ApprovalSeal {
    return new ApprovalSeal(randomBytes(KEY_BYTES));
  }

  seal(a: SealedApproval): string {
    return createHmac('sha256', this.key).update(CONTEXT).update(JSON.stringify([a.threadId, a.taskId, a.seq, a.by, a.sha, a.token, a.host])).digest('hex');
  }

  /** Whether `entry` (queued on the board `threadId` for `taskId`) is an approval this host sealed. */
  holds(threadId: string, taskId: string, entry: QueueEntry): boolean {
    if (!entry.seal || entry.seq === undefined) return false;
    const want = Buffer.from(this.seal({ threadId, taskId, seq: entry.seq, by: entry.by, sha: entry.sha, token: entry.token ?? null, host: entry.host ?? null }), 'hex');
    const got = Buffer.from(entry.seal, 'hex');
    return got.length === want.length && timingSafeEqual(got, want);
  }
}
