import { LeaseFractions } from '../../src-shared/board/limits.js';
import { leaseFor } from '../../src-shared/board/leaseEvidence.js';
import type { Board } from '../../src-shared/board/reducer.js';
import type { Columns } from './boardState.js';
import { isWarning } from './boardState.js';

/**
 * What the window says aloud about leases, for a person who cannot see a countdown turn amber: a held lease
 * entering its last quarter (the moment the countdown turns amber, `isWarning`), and a lease renewed after
 * that warning. Each claim is warned about at most once per warning period; claims that enter it together,
 * or while something was just said, are said as one sentence ("3 leases end within 0:30"), so a burst of
 * claims running out is one message, never a flood. A claim that ends (lapses, is released, done) is said
 * nothing more of: the board shows it. Pure: the clock is given, and `update` says when to look again.
 */

/** A polite message of a few words takes a screen reader about two seconds at its default rate; a newer one
 *  queues behind it (NVDA) or cuts it off (VoiceOver). Messages are at least this far apart; what comes
 *  meanwhile waits and is said together. */
export const ANNOUNCE_GAP_MS = 2_000;

/** One live claim, as the announcer reads it. */
export interface HeldLease {
  readonly taskId: string;
  /** The claim's fencing token: a new claim of the same task is a new lease, with warnings of its own. */
  readonly token: number;
  /** The holder as the window names it ("shell 2"). */
  readonly holder: string;
  /** Host board-clock time at which it lapses. */
  readonly deadline: number;
  /** The lease the claim runs on when it is not the Thread's (its agent profile's: leaseEvidence.ts), whose
   *  last quarter is its warning period. */
  readonly leaseMs?: number;
}

export interface Announcement {
  /** The sentence to put in the live region now, or null. */
  readonly say: string | null;
  /** Host board-clock time at which `update` has something new to find without a board change (a lease
   *  entering its last quarter, a held-back message's turn), or null. */
  readonly nextAt: number | null;
}

/** Time left as a clock reads it, seconds rounded up as the countdowns do: "0:30", "2:05", "1:00:00". */
export function clockText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const ss = String(s % 60).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}:${ss}`;
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${ss}`;
}

interface Warned {
  lease: HeldLease;
  /** Said aloud already (false: waiting for its turn). */
  said: boolean;
}

export class LeaseAnnouncer {
  /** Claims in their warning period, by task and token. */
  private readonly warned = new Map<string, Warned>();
  /** Claims renewed after a warning that was said, not yet said renewed. */
  private readonly renewed = new Map<string, HeldLease>();
  private lastSaidAt: number | null = null;

  constructor(
    private readonly clock: { now(): number },
    private readonly gapMs: number = ANNOUNCE_GAP_MS,
  ) {}

  /** Every lease held now (all of them, each time: one missing has ended) and the Thread's lease length, for
   *  those that run on it. */
  update(leases: Iterable<HeldLease>, threadLeaseMs: number): Announcement {
    const now = this.clock.now();
    const leaseOf = (l: HeldLease) => l.leaseMs ?? threadLeaseMs;
    // The moment a lease enters its last quarter: isWarning turns true just after it.
    const warnAt = (l: HeldLease) => l.deadline - leaseOf(l) * LeaseFractions.warnBelow;
    let nextAt: number | null = null;
    const later = (t: number) => (nextAt = nextAt === null ? t : Math.min(nextAt, t));
    const seen = new Set<string>();
    for (const l of leases) {
      const key = `${l.taskId}#${l.token}`;
      seen.add(key);
      const remaining = l.deadline - now;
      const w = this.warned.get(key);
      if (isWarning(Math.max(0, remaining), leaseOf(l), false)) {
        // Already over when first seen (the window opened, or came back, too late): nothing useful to say.
        if (!w && remaining > 0) {
          this.warned.set(key, { lease: l, said: false });
          this.renewed.delete(key);
        } else if (w) w.lease = l;
        continue;
      }
      if (w) {
        this.warned.delete(key);
        // Out of the last quarter because its deadline moved on: a renewal, worth saying only if the warning
        // was. (A shorter lease setting also moves the quarter; that is no renewal.)
        if (w.said && l.deadline > w.lease.deadline) this.renewed.set(key, l);
      }
      later(warnAt(l) + 1);
    }
    for (const key of [...this.warned.keys()]) if (!seen.has(key)) this.warned.delete(key);
    for (const key of [...this.renewed.keys()]) if (!seen.has(key)) this.renewed.delete(key);

    const waiting = [...this.warned.values()].filter((w) => !w.said && w.lease.deadline > now);
    if (waiting.length === 0 && this.renewed.size === 0) return { say: null, nextAt };
    // The clock may step back when a new snapshot resets it (a restarted host): then the gap is over.
    if (this.lastSaidAt !== null && now >= this.lastSaidAt && now - this.lastSaidAt < this.gapMs) {
      return { say: null, nextAt: Math.min(nextAt ?? Infinity, this.lastSaidAt + this.gapMs) };
    }
    const parts: string[] = [];
    if (waiting.length === 1) {
      const l = (waiting[0] as Warned).lease;
      parts.push(`${l.taskId}'s lease for ${l.holder} ends in ${clockText(l.deadline - now)}`);
    } else if (waiting.length > 1) {
      parts.push(`${waiting.length} leases end within ${clockText(Math.max(...waiting.map((w) => w.lease.deadline - now)))}`);
    }
    if (this.renewed.size === 1) {
      const l = [...this.renewed.values()][0] as HeldLease;
      parts.push(`${l.taskId}'s lease for ${l.holder} renewed`);
    } else if (this.renewed.size > 1) {
      parts.push(`${this.renewed.size} leases renewed`);
    }
    for (const w of waiting) w.said = true;
    this.renewed.clear();
    this.lastSaidAt = now;
    return { say: parts.join('. '), nextAt };
  }
}

/** The leases held on the board now: every claimed task's claim, its holder named by `name`. O(claimed). */
export function heldLeases(board: Board | null, columns: Columns, name: (agentId: string) => string): HeldLease[] {
  if (!board) return [];
  const out: HeldLease[] = [];
  for (const id of columns.claimed) {
    const c = board.tasks.get(id)?.claim;
    if (c) out.push({ taskId: id, token: c.token, holder: name(c.agentId), deadline: c.deadline, leaseMs: leaseFor(board.settings, c.agentId) });
  }
  return out;
}
