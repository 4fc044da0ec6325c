import type { TokenCounts } from './usage.js';

/**
 * What a model's tokens cost (issue 47): US dollars per million tokens of each kind the CLIs report. The fold
 * estimates a turn's money from this when the CLI did not say it (src-shared/usage/costFold.ts).
 *
 * How the counts are read: `input` is input that was neither read from nor written to the prompt cache (Claude's
 * `input_tokens`; a reader of a CLI that counts cached input inside its input, as Codex does, subtracts it);
 * `output` is every billed output token, reasoning included where the provider bills it as output (a reader of
 * a CLI that reports reasoning apart from output adds it in). `reasoning` itself is never priced again.
 */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/**
 * The bundled table, dated: the providers' public list prices as published on 2025-10-01 (anthropic.com/pricing,
 * openai.com/api/pricing, ai.google.dev/gemini-api/docs/pricing), standard tier, prompts under 200k tokens.
 * Bundled because Forkbench never asks the network; a person overrides any model in the Thread's settings
 * (`prices`), and a model in neither is counted as unpriced (tokens only), never guessed.
 *
 * Keys are model-name prefixes as the CLIs write them (`claude-sonnet-4-5-20250929` is priced as
 * `claude-sonnet-4-5`); the longest key that prefixes a model's name wins. OpenAI and Google charge no extra
 * for writing their caches: a cache write there is priced as input.
 */
export const PRICE_TABLE_DATE = '2025-10-01';
export const BUNDLED_PRICES: Readonly<Record<string, ModelPrice>> = {
  // Anthropic: cache writes at 1.25× input (5-minute cache), cache reads at 0.1× input.
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  // OpenAI: cached input at 0.1× (GPT-5 family) or 0.25× (4.1, o-series) input.
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0.25 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0.05 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0.4 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 1.1 },
  o3: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
  // Google: context caching read at 0.25× input (storage, charged per hour, is not a per-turn figure).
  'gemini-2.5-pro': { input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 1.25 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0.1 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cacheRead: 0.075, cacheWrite: 0.3 },
};

export const PriceLimits = {
  /** Models a Thread's own prices name: a handful in practice (the models its agents use); each is read by
   *  prefix on every usage event, so the list stays short. */
  maxModels: 100,
  /** A price per million tokens: today's dearest is $75 (Opus 4 output); $10,000 leaves room for any model
   *  and still refuses a slip of several digits. */
  maxPerMillion: 10_000,
  /** A model's name as a key: the CLIs' longest are under 60 characters. */
  maxModelChars: 200,
} as const;

/** The price of `model`: the Thread's own prices first, then the bundled table, each by longest prefix; null
 *  when neither knows it (or the turn names no model). */
export function priceOf(model: string | null, own: Readonly<Record<string, ModelPrice>> | undefined): ModelPrice | null {
  if (model === null) return null;
  const name = model.toLowerCase();
  return (own && longestPrefix(own, name)) ?? longestPrefix(BUNDLED_PRICES, name);
}

function longestPrefix(table: Readonly<Record<string, ModelPrice>>, name: string): ModelPrice | null {
  let best: string | null = null;
  for (const k of Object.keys(table)) if (name.startsWith(k.toLowerCase()) && (best === null || k.length > best.length)) best = k;
  return best === null ? null : (table[best] as ModelPrice);
}

/** Money in whole micro-dollars: every figure the fold keeps is a whole number of them, so sums are exact and
 *  the same whatever the order or batching of the turns (floating-point dollars would not be). */
export const MICROS_PER_USD = 1_000_000;

/** A turn's money at `price`, in whole micro-dollars. */
export function estimateMicros(tokens: TokenCounts, price: ModelPrice): number {
  // $ per million tokens × tokens = micro-dollars.
  return Math.round(tokens.input * price.input + tokens.output * price.output + tokens.cacheRead * price.cacheRead + tokens.cacheWrite * price.cacheWrite);
}
