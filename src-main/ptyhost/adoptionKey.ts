import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as net from 'node:net';

/**
 * The key a board host proves it started this pty host with. It is made by the board host that starts the
 * pty host and handed over on an inherited descriptor (never argv, the environment or a file, all of which a
 * pane of the same user can read), read once and closed. The pty host keeps it in memory only; a greeting
 * proves it by answering the pty host's challenge, so the key itself never crosses the socket.
 */

/** 256 bits: unguessable, and the HMAC's own key size. */
const KEY_BYTES = 32;
/** A fresh challenge per greeting, as long as the key. */
const CHALLENGE_BYTES = 32;
/** Binds a proof to this use, so it can never be replayed as anything else. */
const CONTEXT = 'forkbench pty host adoption\0';

export const newAdoptionKey = (): Buffer => randomBytes(KEY_BYTES);
export const newChallenge = (): string => randomBytes(CHALLENGE_BYTES).toString('hex');

export function proofFor(key: Buffer, challenge: string): string {
  return createHmac('sha256', key).update(CONTEXT).update(challenge).digest('hex');
}

export function proofHolds(key: Buffer | null, challenge: string, proof: string): boolean {
  if (!key) return false;
  const want = Buffer.from(proofFor(key, challenge), 'hex');
  const got = Buffer.from(proof, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

/** Long enough for a board host on a loaded machine to write 32 bytes right after the spawn. */
const KEY_READ_TIMEOUT_MS = 5_000;

/** Read the key from an inherited descriptor (its writer ends it) and close the descriptor. */
export function readKeyFrom(fd: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = new net.Socket({ fd, readable: true, writable: false });
    const parts: Buffer[] = [];
    const timer = setTimeout(() => finish(new Error(`no adoption key on descriptor ${fd} within ${KEY_READ_TIMEOUT_MS} ms`)), KEY_READ_TIMEOUT_MS);
    const finish = (err: Error | null) => {
      clearTimeout(timer);
      s.destroy();
      const key = Buffer.concat(parts);
      if (err) reject(err);
      else if (key.length !== KEY_BYTES) reject(new Error(`the adoption key on descriptor ${fd} is ${key.length} bytes, not ${KEY_BYTES}`));
      else resolve(key);
    };
    s.on('data', (d: Buffer) => {
      parts.push(d);
      if (Buffer.concat(parts).length > KEY_BYTES) finish(null);
    });
    s.once('end', () => finish(null));
    s.once('error', (err) => finish(err));
  });
}
