/**
 * What an agent's CLI spent, as its own records say it (issue 47): the contract between the host's readers of
 * those records (src-main/usage/), the board (a `usage` event per batch of turns, attributed to a claim when it
 * is recorded) and every surface that shows cost (cards, details, the agent list, `forkbench cost`, MCP, CSV).
 *
 * Money: a turn carries the CLI's own figure when the CLI reports one; otherwise the board's fold estimates it
 * from the price table (a bundled, dated table per model, overridden in the Thread's settings), which is on the
 * board, so every host and window that replays it agrees.
 */

/** Token counts by kind, as the CLIs name them. A kind a CLI does not report is 0. */
export interface TokenCounts {
  readonly input: number;
  readonly output: number;
  /** Input read back from the provider's prompt cache (Claude `cache_read_input_tokens`, Codex `cached_input_tokens`). */
  readonly cacheRead: number;
  /** Input written to the prompt cache (Claude `cache_creation_input_tokens`). */
  readonly cacheWrite: number;
  /** Reasoning output (Codex `reasoning_output_tokens`, Gemini `thoughts`); also counted in `output` only when the CLI does. */
  readonly reasoning: number;
}

export const NO_TOKENS: TokenCounts = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };

/** Where a turn's figures were read: a CLI's own records, or `forkbench usage` (a script's or custom profile's report). */
export const USAGE_SOURCES = ['claude', 'codex', 'gemini', 'opencode', 'aider', 'report'] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];

/** One turn (one model response) of an agent's CLI. */
export interface UsageTurn {
  /** Stable id of the record it was read from (the CLI's message id, or file and offset): a turn whose id the
   *  board has already recorded for this agent is never counted again (a restart re-reads files). */
  readonly id: string;
  /** When the CLI says the turn happened (ms since the epoch), or null when its record has no time. Attribution
   *  uses the host's receipt time instead when this is off by more than a bound (clock skew). */
  readonly cliAt: number | null;
  readonly model: string | null;
  readonly tokens: TokenCounts;
  /** Money in US dollars as the CLI itself reported it (Claude's status line, `forkbench usage --cost`), or null:
   *  the fold estimates it from the price table (or counts the turn as unpriced when the table lacks its model). */
  readonly usd: number | null;
}

/**
 * A place in one of a CLI's record streams (issue 47: a restart re-reads nothing twice). `stream` names one
 * record file as first written (its name and a digest of its first line, so a file replaced by another is
 * another stream), `at` a byte offset in it. A reader hands out a stream's turns in the order of their places,
 * and says up to where it has handed out every turn (its mark): the board keeps the highest mark per agent,
 * source and stream, and a turn read again at a place before it is known counted, however long ago.
 */
export interface UsagePosition {
  readonly stream: string;
  readonly at: number;
}

/** How a batch of turns was attributed when the board recorded it. */
export type UsageAttribution =
  /** The agent held exactly this claim when the turns were spent. */
  | 'held'
  /** The agent held several claims: the one it last acted on (marked so in every surface). */
  | 'last-acted'
  /** The agent held no claim: its own overhead, shown as such, counted to no task. */
  | 'overhead';

/** Rate-limit headroom a CLI reports for flat-rate plans (Claude's status line `rate_limits`): shown per agent. */
export interface RateLimitReading {
  /** The CLI's name for the window (`five_hour`, `seven_day`, …). */
  readonly window: string;
  /** Percent of the window's allowance used, 0–100. */
  readonly usedPct: number;
  /** When the window resets (ms since the epoch), or null when not said. */
  readonly resetsAt: number | null;
}

/** Spend summed over turns: what every surface shows (a card, an agent, a day, the Thread). */
export interface SpendFigures {
  readonly tokens: TokenCounts;
  /** Money: the CLIs' own figures plus the price table's estimates. */
  readonly usd: number;
  /** How many of `turns` had no price (neither the CLI's figure nor the table knew the model): tokens only. */
  readonly unpriced: number;
  readonly turns: number;
}

/** A task's cost, folded from the usage events attributed to it (the board reducer keeps it on the task). */
export interface TaskCost extends SpendFigures {
  /** Per agent that spent on it; `lastActed` counts turns attributed as the task it last acted on. */
  readonly byAgent: Readonly<Record<string, SpendFigures & { readonly lastActed: number }>>;
  /** Cumulative spend over time, for a sparkline: [host ms, usd, tokens], at most a bounded number of points. */
  readonly spend: ReadonlyArray<readonly [number, number, number]>;
}

/** The board's whole cost book besides the tasks (the board reducer keeps it on the board). */
export interface CostBook {
  readonly thread: SpendFigures;
  /** Per agent: all it spent, its overhead (no claim held) apart, its profile and its latest rate-limit readings. */
  readonly agents: Readonly<Record<string, SpendFigures & { readonly profile: string; readonly overhead: SpendFigures; readonly limits: readonly RateLimitReading[] }>>;
  readonly profiles: Readonly<Record<string, SpendFigures>>;
  /** Per UTC day (YYYY-MM-DD of the event's wall time). */
  readonly days: Readonly<Record<string, SpendFigures>>;
}
