import { createHash } from 'node:crypto';

/** A host's name on a board is shown in every window ("shell 1 on NAME"), in notices and in the log: one
 *  line a person reads, not a paragraph. 63 is a DNS label's limit, which a machine's own name meets. */
const MAX_HOST_NAME_CHARS = 63;

/** The host id's digest, in hex characters, that tells apart hosts of one machine name: 4 give 65,536 tags,
 *  so hosts that share a name rarely need more; 8 and then the whole id are tried only when they do. */
const SHORT_TAG_CHARS = 4;
const LONG_TAG_CHARS = 8;

/** A name a person chose for this host (`serve --host-name NAME`) is not taken on the board. */
export class HostNameTakenError extends Error {
  readonly code = 'host-name-taken';
  constructor(
    readonly hostName: string,
    board: string,
  ) {
    super(`another host of the shared board "${board}" runs under the name "${hostName}": give this one another name (serve --host-name NAME), or stop that one first. Nothing was written to the board.`);
    this.name = 'HostNameTakenError';
  }
}

/** The host name a person gave, checked: one printable line, up to 63 characters. Throws a sentence. */
export function checkHostName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new Error('--host-name takes a name, not an empty one');
  if (trimmed.length > MAX_HOST_NAME_CHARS) throw new Error(`--host-name takes at most ${MAX_HOST_NAME_CHARS} characters, not ${trimmed.length}`);
  if (/\p{C}/u.test(trimmed)) throw new Error('--host-name takes printable characters only');
  return trimmed;
}

/** A short tag of the host id: stable across its restarts (the id is kept in its data folder). */
function tagOf(hostId: string, chars: number): string {
  return createHash('sha256').update(hostId).digest('hex').slice(0, chars);
}

/**
 * The names this host may take on a board, in order of preference: the one a person chose (alone: taken, it
 * is refused, never changed behind their back), or the machine's name with a short tag of the host id, then
 * a longer one, then the whole id, for the rare board where two hosts of one machine name share a tag.
 */
export function hostNameChoices(o: { machine: string; hostId: string; chosen?: string }): string[] {
  if (o.chosen !== undefined) return [o.chosen];
  const machine = (o.machine.replace(/\p{C}/gu, '').trim() || 'host').slice(0, MAX_HOST_NAME_CHARS - LONG_TAG_CHARS - 1);
  return [`${machine}-${tagOf(o.hostId, SHORT_TAG_CHARS)}`, `${machine}-${tagOf(o.hostId, LONG_TAG_CHARS)}`, `${machine}-${o.hostId}`];
}
