import { z } from 'zod';
import type { UsageEventBody } from '../../src-shared/board/events.js';
import type { Board } from '../../src-shared/board/reducer.js';
import { ok, reject, type Result } from '../../src-shared/board/result.js';
import { RateLimitSchema, UsageMarkSchema, UsageTurnSchema } from '../../src-shared/board/storedEvents.js';
import { claimAt, LedgerBounds, markOf, turnDigest, type Attributed, type ClaimSpan } from '../../src-shared/board/usageLedger.js';
import { profileOfAgent } from '../../src-shared/board/leaseEvidence.js';
import type { RateLimitReading, UsageAttribution, UsagePosition, UsageSource, UsageTurn } from '../../src-shared/usage/usage.js';

/**
 * How the board records what an agent's CLI spent (issue 47): the plan behind LeaseEngine.recordUsage, its one
 * writer of `usage` events. Pure: it reads the board (its usage ledger, usageLedger.ts) and returns the events.
 *
 * - Each turn is attributed by its time to the claim the agent held then (claimAt): the CLI's own time, or the
 *   host's receipt time when the CLI's is off by more than a bound (its clock is wrong, or its record has none).
 * - Turns are grouped per attributed claim, one event per claim (split only past an event's size cap).
 * - A turn id already recorded for the agent is skipped (the ledger keeps them, rebuilt by every replay), and
 *   so is a second turn of one id in the same batch: a reader that reads a file again counts nothing twice.
 * - Beyond the ledger's last ids, a turn the reader placed (UsagePosition) before the mark the board recorded
 *   for its stream is skipped too: a reader hands out a stream's turns in order and marks only up to where it
 *   handed out every one, so a turn before the mark was recorded (or refused as invalid) then. The mark is a
 *   place in a file, not a time: a wrong clock or a record written late cannot move it (a record written late
 *   lies later in the file), and a file replaced by another is another stream.
 */
export const UsageRecording = {
  /**
   * How far a CLI's time for a turn may be from what the host knows of it before the host's receipt time is
   * used instead. A record may carry its turn's start (Claude's and Codex's lines are stamped as the response
   * begins) and is written when it ends, so an honest time lags the record by up to one response: 10 min is
   * the longest a single request runs (Claude Code's and Codex's request timeouts are 10 min). A time further
   * off than that is a wrong clock, not a slow turn.
   */
  skewBoundMs: 10 * 60_000,
  /** The event schema's cap on turns per event (storedEvents.ts): a larger group is split. */
  turnsPerEvent: 10_000,
  /** Turns one call may carry: a reader's batch is what one read found; a day of one busy agent is ~10,000. */
  turnsPerCall: 50_000,
} as const;

/** What the reader knows of when its turns were written: none was there when it last looked, at `notBefore`
 *  (wall ms; null on a first read, such as after a restart, when the records may be of any age). */
export interface UsageReadWindow {
  readonly notBefore: number | null;
  /** Where the reader found each turn, by turn id (a turn it cannot place is absent: its id alone guards it). */
  readonly positions?: ReadonlyMap<string, UsagePosition>;
  /** Per stream, up to where the reader has handed out every turn (these and earlier reads'): recorded with the
   *  turns, so the mark and the turns before it are on the board together or not at all. */
  readonly marks?: readonly UsagePosition[];
}

/** Where one call's turns went. */
export interface UsageRecorded {
  /** Turns recorded now. */
  readonly recorded: number;
  /** Turns whose id was recorded already (or repeated in the call): not counted again. */
  readonly skipped: number;
  /** Per claim they were attributed to (null task: the agent's own overhead). */
  readonly to: ReadonlyArray<{ readonly taskId: string | null; readonly token: number | null; readonly how: UsageAttribution; readonly turns: number }>;
  /** Turns attributed by the host's receipt time, their own being absent or off by more than the bound. */
  readonly byReceipt: number;
}

export interface UsageInput {
  readonly agentId: string;
  readonly source: UsageSource;
  readonly turns: readonly UsageTurn[];
  readonly limits?: readonly RateLimitReading[];
  /** Host wall ms now: when the host received these turns. */
  readonly receivedAt: number;
  readonly window?: UsageReadWindow;
}

const TurnsSchema = z.array(UsageTurnSchema).max(UsageRecording.turnsPerCall, `at most ${UsageRecording.turnsPerCall} turns at once`);
const LimitsSchema = z.array(RateLimitSchema).max(16, 'at most 16 rate-limit readings');
const MarksSchema = z.array(UsageMarkSchema).max(LedgerBounds.marks, `at most ${LedgerBounds.marks} record streams at once`);

/** The zod issue as a sentence naming the turn: `turn 3 (id "msg_1"): tokens.input: …`. */
function turnIssue(turns: readonly UsageTurn[], error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the turns are not valid';
  const [i, ...rest] = issue.path;
  if (typeof i !== 'number') return issue.message;
  const id = (turns[i] as { id?: unknown } | undefined)?.id;
  return `turn ${i + 1}${typeof id === 'string' ? ` (id ${JSON.stringify(id.slice(0, 80))})` : ''}: ${rest.length ? `${rest.join('.')}: ` : ''}${issue.message}`;
}

/** The time a turn is attributed at: the CLI's, unless absent or off by more than the bound from what the host
 *  knows (after its receipt, or before the reader's previous look found nothing), then the receipt's. */
export function attributionTime(cliAt: number | null, receivedAt: number, notBefore: number | null): { at: number; byReceipt: boolean } {
  const bound = UsageRecording.skewBoundMs;
  if (cliAt === null || cliAt > receivedAt + bound || (notBefore !== null && cliAt < notBefore - bound)) return { at: receivedAt, byReceipt: true };
  return { at: cliAt, byReceipt: false };
}

/** Whether two sets of rate-limit readings say the same, in any order. */
export function sameReadings(a: readonly RateLimitReading[] | undefined, b: readonly RateLimitReading[]): boolean {
  if (!a || a.length !== b.length) return false;
  const key = (r: RateLimitReading) => JSON.stringify([r.window, r.usedPct, r.resetsAt]);
  const had = new Set(a.map(key));
  return b.every((r) => had.has(key(r)));
}

/** The profile the events name: the one the agent's id says (agentIds.ts), `custom` for any other id. */
export function profileOf(agentId: string): string {
  return profileOfAgent(agentId) ?? 'custom';
}

/**
 * The `usage` events for `input` on `board`. `held`: the claims the agent holds now, for claims granted before the
 * board kept a ledger (their spans are not in it). Refused whole (nothing recorded) when a turn or reading is
 * not one the board's journal would load back.
 */
export function planUsage(board: Readonly<Board>, held: readonly ClaimSpan[], input: UsageInput): Result<{ events: UsageEventBody[]; recorded: UsageRecorded }> {
  const turns = TurnsSchema.safeParse(input.turns);
  if (!turns.success) return reject('invalid-input', `usage not recorded: ${turnIssue(input.turns, turns.error)}`);
  const limits = input.limits === undefined ? undefined : LimitsSchema.safeParse(input.limits);
  if (limits && !limits.success) return reject('invalid-input', `usage not recorded: ${limits.error.issues[0]?.path.join('.')}: ${limits.error.issues[0]?.message}`);
  const marks = input.window?.marks === undefined ? undefined : MarksSchema.safeParse(input.window.marks);
  if (marks && !marks.success) return reject('invalid-input', `usage not recorded: marks.${marks.error.issues[0]?.path.join('.')}: ${marks.error.issues[0]?.message}`);
  const agent = board.usageLedger.agents.get(input.agentId);
  const seen = new Set(agent?.seen);
  const before = (t: UsageTurn): boolean => {
    const p = input.window?.positions?.get(t.id);
    const mark = p && markOf(agent, input.source, p.stream);
    return p !== undefined && mark !== undefined && p.at < mark;
  };
  const groups = new Map<string, { to: Attributed; turns: UsageTurn[] }>();
  let skipped = 0;
  let byReceipt = 0;
  for (const t of turns.data) {
    const d = turnDigest(t.id);
    if (seen.has(d) || before(t)) {
      skipped++;
      continue;
    }
    seen.add(d);
    const when = attributionTime(t.cliAt, input.receivedAt, input.window?.notBefore ?? null);
    if (when.byReceipt) byReceipt++;
    const to = claimAt(agent, when.at, held);
    const key = `${to.token ?? ''}:${to.how}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { to, turns: [] }));
    g.turns.push(t);
  }
  const events: UsageEventBody[] = [];
  const profile = profileOf(input.agentId);
  for (const g of groups.values()) {
    for (let i = 0; i < g.turns.length; i += UsageRecording.turnsPerEvent) {
      events.push({ kind: 'usage', agentId: input.agentId, profile, source: input.source, turns: g.turns.slice(i, i + UsageRecording.turnsPerEvent), taskId: g.to.taskId, token: g.to.token, how: g.to.how });
    }
  }
  // The readings are the agent's latest, said once: on the call's last event. With no turn to carry them, an
  // event of their own, when they say something new: a CLI repeats its headroom on every status update.
  const last = events.at(-1);
  if (last && limits?.data.length) last.limits = limits.data;
  else if (!last && limits?.data.length && !sameReadings(board.costs.agents[input.agentId]?.limits, limits.data)) {
    events.push({ kind: 'usage', agentId: input.agentId, profile, source: input.source, turns: [], taskId: null, token: null, how: 'overhead', limits: limits.data });
  }
  // So are the marks that move: with the call's turns, so a mark is never on the board without them.
  const moved = marks?.data.filter((m) => !((markOf(agent, input.source, m.stream) ?? -1) >= m.at));
  if (last && moved?.length) last.marks = moved;
  const to = [...groups.values()].map((g) => ({ taskId: g.to.taskId, token: g.to.token, how: g.to.how, turns: g.turns.length }));
  return ok({ events, recorded: { recorded: turns.data.length - skipped, skipped, to, byReceipt } });
}
