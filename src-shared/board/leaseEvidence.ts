import type { BoardEvent } from './events.js';
import { Limits } from './limits.js';
import type { Claim, Task, ThreadSettings } from './model.js';

/**
 * The evidence a lease length is chosen from (issue 34, item 5), per agent profile: how long claims that
 * ended well went quiet, and how many claims lapsed while their agent was alive and wrote later (a live
 * claim reclaimed: the honest cost of a lease too short). Folded from the board's events by the reducer, so
 * it is the same on every host and after every restart (a snapshot carries it), and it costs nothing per
 * renewal beyond the field the liveness check's renewal already carries (`quietMs`).
 *
 * A profile is read from the agent's id (`claude-3-…`, agentIds.ts): the host names every agent it launches
 * that way, so the profile needs no event of its own, and an agent cannot claim to be of another profile.
 */

/** How many claims of each kind (well ended, lapsed, reclaimed) a profile's evidence keeps: enough to see a
 *  profile's rare long pause, few enough that a profile that changed (a new model) shows it within a day. */
export const EVIDENCE_CLAIMS = 50;
/** Lapsed claims remembered until their agent writes again: a live agent writes within minutes of a lapse
 *  (its next commit or note); 200 is every lapse of a busy day, and bounds what a snapshot carries. */
export const LAPSES_REMEMBERED = 200;

/** A profile as the agent's id names it (`claude` for `claude-3-0123456789ab`); null for any other id. */
export function profileOfAgent(agentId: string): string | null {
  const m = /^([a-z][a-z0-9]{0,31})-\d{1,9}-[0-9a-f]{12}$/.exec(agentId);
  return m ? (m[1] as string) : null;
}

/** The lease a claim of `agentId` gets: its profile's when the Thread sets one, else the Thread's. */
export function leaseFor(settings: Pick<ThreadSettings, 'leaseMs' | 'leaseByProfile'>, agentId: string): number {
  const p = profileOfAgent(agentId);
  const by = settings.leaseByProfile;
  return (p !== null && by && Object.hasOwn(by, p) ? by[p] : undefined) ?? settings.leaseMs;
}

/** The shortest lease any claim can have now: the liveness check's rhythm must fit inside it. */
export function shortestLease(settings: Pick<ThreadSettings, 'leaseMs' | 'leaseByProfile'>): number {
  return Math.min(settings.leaseMs, ...Object.values(settings.leaseByProfile ?? {}));
}

export interface ProfileEvidence {
  /** The longest quiet gap (ms) of each of the last EVIDENCE_CLAIMS claims that ended well, oldest first. */
  readonly gaps: readonly number[];
  /** The lease (ms) each of the last EVIDENCE_CLAIMS lapses happened at: claims that lapsed while worked on. */
  readonly lapses: readonly number[];
  /** The lease (ms) at which each of the last EVIDENCE_CLAIMS live claims was reclaimed: it lapsed, and its
   *  agent, alive, wrote or committed to it afterwards (and was refused). */
  readonly reclaimed: readonly number[];
}

/** A claim that lapsed while its task was being worked on, waiting to learn whether its agent was alive. */
interface LapsedClaim {
  readonly taskId: string;
  readonly agentId: string;
  readonly token: number;
  readonly profile: string;
  readonly leaseMs: number;
}

/** Small on purpose: a handful of profiles, each list at most EVIDENCE_CLAIMS long, and at most
 *  LAPSES_REMEMBERED lapses, so replacing it on the events that change it (an approval, a lapse, a refusal
 *  of a lapsed claim's write) costs the same on a board of 10 tasks or 10k. What a task in review will add
 *  once approved rides on the task (Task.submittedQuiet), not here. */
export interface LeaseEvidence {
  readonly profiles: Readonly<Record<string, ProfileEvidence>>;
  /** Oldest first, at most LAPSES_REMEMBERED. */
  readonly lapsed: readonly LapsedClaim[];
}

/** What a claim that said done adds to its profile's evidence if its work is approved. */
export interface SubmittedQuiet {
  readonly profile: string;
  readonly quietMs: number;
}

export const NO_EVIDENCE: LeaseEvidence = { profiles: {}, lapsed: [] };

/** The quiet gap a submission freezes (the reducer keeps it on the task until approval or a return). */
export function quietAtSubmit(claim: Claim | null, agentId: string): SubmittedQuiet | null {
  const profile = profileOfAgent(agentId);
  return claim && profile !== null ? { profile, quietMs: claim.quietMs ?? 0 } : null;
}
/** What the fence says to a write under a claim that is over. */
const FENCE_CODES: ReadonlySet<string> = new Set(['lapsed', 'stale-token', 'not-holder']);
const EMPTY_PROFILE: ProfileEvidence = { gaps: [], lapses: [], reclaimed: [] };

const keepLast = <T>(xs: readonly T[], x: T): T[] => [...xs.slice(Math.max(0, xs.length - EVIDENCE_CLAIMS + 1)), x];
function withProfile(ev: LeaseEvidence, profile: string, f: (p: ProfileEvidence) => ProfileEvidence): LeaseEvidence {
  return { ...ev, profiles: { ...ev.profiles, [profile]: f(ev.profiles[profile] ?? EMPTY_PROFILE) } };
}

/**
 * The evidence after event `e`, given the task it concerns as it was before and after. Pure, and returns
 * `ev` itself for the events that change nothing (every renewal): it runs inside the reducer on every event.
 * The claim's own longest quiet gap rides on the claim (Claim.quietMs, set by the reducer's renewals).
 */
export function foldEvidence(ev: LeaseEvidence, e: BoardEvent, before: Task | undefined, settings: ThreadSettings): LeaseEvidence {
  switch (e.kind) {
    case 'approved': {
      const p = before?.submittedQuiet;
      if (!p) return ev;
      return withProfile(ev, p.profile, (x) => ({ ...x, gaps: keepLast(x.gaps, p.quietMs) }));
    }
    case 'claim-ended': {
      // A lapse counts when the claim was being worked on; one that ran out in review lost nothing.
      const profile = profileOfAgent(e.agentId);
      if (e.reason !== 'lapsed' || before?.state !== 'claimed' || profile === null) return ev;
      const leaseMs = leaseFor(settings, e.agentId);
      const lapsed = [...ev.lapsed.slice(Math.max(0, ev.lapsed.length - LAPSES_REMEMBERED + 1)), { taskId: e.taskId, agentId: e.agentId, token: e.token, profile, leaseMs }];
      return withProfile({ ...ev, lapsed }, profile, (x) => ({ ...x, lapses: keepLast(x.lapses, leaseMs) }));
    }
    case 'write-rejected': {
      // Only the fence's answer to the lapsed claim itself: a write under its token (tokens never repeat, so
      // whatever the fence then said, lapsed, stale or not the holder once the task moved on, it was that
      // claim's agent at work), or one without a token that the fence called this agent's lapsed lease. A
      // refusal for any other reason (its quota, bad input) proves nothing.
      if (e.taskId === null || !(e.token === null ? e.code === 'lapsed' : FENCE_CODES.has(e.code))) return ev;
      const i = ev.lapsed.findIndex((l) => l.taskId === e.taskId && l.agentId === e.agentId && (e.token === null || e.token === l.token));
      if (i < 0) return ev;
      const l = ev.lapsed[i] as LapsedClaim;
      const lapsed = [...ev.lapsed.slice(0, i), ...ev.lapsed.slice(i + 1)];
      return withProfile({ ...ev, lapsed }, l.profile, (x) => ({ ...x, reclaimed: keepLast(x.reclaimed, l.leaseMs) }));
    }
    default:
      return ev;
  }
}

// ------------------------------------------------------------------ what the window shows

/** Upper edges (ms) of the quiet-gap histogram's buckets, the last open-ended: the liveness check's 30 s
 *  rhythm and the default lease's 120 s are edges, so a bucket reads as "renewed within one check", etc. */
export const GAP_BUCKET_EDGES_MS = [30_000, 60_000, 90_000, 120_000, 180_000, 300_000] as const;

export interface GapBucket {
  /** Inclusive lower and exclusive upper edge (ms); `toMs` null for the last, open bucket. */
  readonly fromMs: number;
  readonly toMs: number | null;
  readonly count: number;
}

export function gapHistogram(gaps: readonly number[]): GapBucket[] {
  const out: GapBucket[] = [];
  let from = 0;
  for (const to of [...GAP_BUCKET_EDGES_MS, null]) {
    out.push({ fromMs: from, toMs: to, count: gaps.filter((g) => g >= from && (to === null || g < to)).length });
    if (to !== null) from = to;
  }
  return out;
}

/**
 * The rule a lease is suggested by. A well-ended claim's quiet gap is read at the liveness check, up to one
 * check (30 s) after the agent fell silent and before it spoke again, so it reads short by up to a check; and
 * a profile's next long pause may be longer than any seen. So the suggestion is half again the longest gap.
 * A live claim reclaimed says its lease was too short for that agent, whatever the gaps say: the suggestion
 * is then at least half again the lease it was reclaimed at. Rounded up to a step a person reads at a
 * glance; with too few claims to trust, it never suggests a shorter lease than the one in force.
 */
export const SuggestRule = {
  /** Half again: the check's 30 s of under-read on a 60 s gap, and room for a pause a third longer. */
  margin: 1.5,
  /** Suggestions are whole half-minutes: 150 s, 180 s. */
  stepMs: 30_000,
  /** Below this many well-ended claims the evidence only ever widens the lease: five quiet claims say little
   *  about the sixth. */
  minClaimsToShorten: 10,
} as const;

export interface LeaseSuggestion {
  readonly profile: string;
  /** The lease the profile's claims get now. */
  readonly currentMs: number;
  /** What the evidence suggests; equal to currentMs when it says keep it. */
  readonly suggestedMs: number;
  readonly longestGapMs: number | null;
  readonly claims: number;
  readonly reclaimed: number;
  /** The longest lease a live claim was reclaimed at, or null. */
  readonly reclaimedAtMs: number | null;
  /** One sentence: the evidence and the suggestion. */
  readonly text: string;
}

const spell = (ms: number) => `${Math.round(ms / 1000)} s`;

/** The lease the evidence suggests for one profile; null when there is none (no claim ended well or was
 *  reclaimed). Pure: nothing sets the lease from it but a person. */
export function suggestLease(profile: string, label: string, ev: ProfileEvidence | undefined, currentMs: number): LeaseSuggestion | null {
  if (!ev || (ev.gaps.length === 0 && ev.reclaimed.length === 0)) return null;
  const longest = ev.gaps.length ? Math.max(...ev.gaps) : null;
  const reclaimedAt = ev.reclaimed.length ? Math.max(...ev.reclaimed) : null;
  const want = Math.max((longest ?? 0) * SuggestRule.margin, (reclaimedAt ?? 0) * SuggestRule.margin);
  let suggested = Math.ceil(want / SuggestRule.stepMs) * SuggestRule.stepMs;
  if (suggested < currentMs && (ev.reclaimed.length > 0 || ev.gaps.length < SuggestRule.minClaimsToShorten)) suggested = currentMs;
  suggested = Math.min(Limits.maxLeaseMs, Math.max(Limits.minLeaseMs, suggested));
  const parts: string[] = [];
  if (longest !== null) parts.push(`${label}'s longest quiet gap in the last ${ev.gaps.length} claim${ev.gaps.length === 1 ? '' : 's'} was ${spell(longest)}`);
  else parts.push(`no claim of ${label} has ended well yet`);
  if (reclaimedAt !== null) {
    const n = ev.reclaimed.length;
    parts.push(`${n} live claim${n === 1 ? ' was' : 's were'} reclaimed at ${spell(reclaimedAt)}`);
  }
  const verdict = suggested === currentMs ? `keep ${spell(currentMs)}` : `suggest ${spell(suggested)}`;
  return {
    profile,
    currentMs,
    suggestedMs: suggested,
    longestGapMs: longest,
    claims: ev.gaps.length,
    reclaimed: ev.reclaimed.length,
    reclaimedAtMs: reclaimedAt,
    text: `${parts.join('; ')}: ${verdict}`,
  };
}

/** One profile's evidence and lease as `forkbench leases` (and its MCP tool) answers it. */
export interface ProfileLeaseView {
  readonly profile: string;
  readonly label: string;
  /** The lease its claims get now, and whether the Thread sets it for this profile (else the Thread's). */
  readonly leaseMs: number;
  readonly own: boolean;
  readonly gaps: readonly GapBucket[];
  readonly lapses: number;
  readonly reclaimed: number;
  readonly suggestion: { readonly text: string; readonly suggestedMs: number } | null;
}

/** Every profile with evidence or a lease of its own, in the order of `order` (unknown ones last). */
export function profileLeaseViews(settings: ThreadSettings, evidence: LeaseEvidence, labelOf: (profile: string) => string, order: readonly string[]): ProfileLeaseView[] {
  const rank = (p: string) => (order.includes(p) ? order.indexOf(p) : order.length);
  const profiles = Object.keys({ ...evidence.profiles, ...settings.leaseByProfile }).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return profiles.map((profile) => {
    const ev = Object.hasOwn(evidence.profiles, profile) ? evidence.profiles[profile] : undefined;
    const leaseMs = leaseFor(settings, `${profile}-1-000000000000`);
    const s = suggestLease(profile, labelOf(profile), ev, leaseMs);
    return {
      profile,
      label: labelOf(profile),
      leaseMs,
      own: Object.hasOwn(settings.leaseByProfile, profile),
      gaps: gapHistogram(ev?.gaps ?? []),
      lapses: ev?.lapses.length ?? 0,
      reclaimed: ev?.reclaimed.length ?? 0,
      suggestion: s ? { text: s.text, suggestedMs: s.suggestedMs } : null,
    };
  });
}
