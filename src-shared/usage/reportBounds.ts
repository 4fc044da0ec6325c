/**
 * What one self-reported turn (`forkbench usage`, issue 47) may claim. A report is an agent's own word: a
 * script's, or an agent's that was told to stop because a budget was spent and would spend it for the others.
 * The board takes it (a script has no other way to be counted) but holds each turn to what a real turn can be,
 * so one report cannot exhaust a budget, and the agent's write quota (writeQuota.ts) bounds how many it makes.
 * An agent whose CLI's own records are read may not report at all (agentRpc.ts): it would count them twice.
 */
export const ReportBounds = {
  /** Tokens of one kind in one turn. A turn reads at most its model's context window and writes at most its
   *  output limit; the largest windows today are 1 to 2 million tokens (Gemini 2.5 Pro, GPT-4.1, Claude Sonnet
   *  4's long context). Ten million leaves room for the next models and still refuses a slip of several digits,
   *  or a turn made up to fill a token budget at once (the board's own bound, 10^12, is its journal's). */
  maxTokensPerKind: 10_000_000,
  /** Money of one turn. The dearest real turn today is a full 2-million-token context at $15 per million (Claude
   *  Opus 4's input, the dearest listed in prices.ts) and a 128k output at $75: about $40, twice that for long
   *  prompts billed at double. $100 is above it, and a thousandth of a typo's $100,000. */
  maxUsd: 100,
} as const;
