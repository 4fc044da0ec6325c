import { z } from 'zod';

/**
 * Whether an agent's process runs inside a sandbox, and which (issue 43): decided by the host as it starts the
 * pane (src-main/sandbox), carried on the agent's view to the window, and kept with the pane by the pty host so
 * an agent taken back after a board host restart says what it was started with, not what a new start would be.
 */
export type Containment = { by: 'bwrap' } | { by: null; why: string };

/** A reason is one sentence of the host's (a missing tool, a person's setting): far below this. The bound only
 *  keeps a broken peer of the pty host from handing the window megabytes. */
const MAX_WHY_CHARS = 2_000;

/** The shape as a peer (the pty host) hands it back: checked like every field it sends. */
export const ContainmentSchema: z.ZodType<Containment, Containment> = z.union([
  z.object({ by: z.literal('bwrap') }).strict(),
  z.object({ by: z.null(), why: z.string().max(MAX_WHY_CHARS) }).strict(),
]);

/** The sandboxes' names as a person reads them. */
const SANDBOX_NAMES: Record<NonNullable<Containment['by']>, string> = { bwrap: 'bubblewrap' };

/** The one line a tab's details show: "Contained by bubblewrap", or "Not contained: <why>". */
export function containmentLine(c: Containment): string {
  return c.by === null ? `Not contained: ${c.why}` : `Contained by ${SANDBOX_NAMES[c.by]}`;
}
