/**
 * What the `forkbench` CLI and the git fence hooks say when the board answers no, and the exit codes that go
 * with it. The hooks speak "in the CLI's words" so an agent reads one kind of refusal whichever stopped it;
 * that holds only while both take them from here.
 */

/** 0 ok, 2 usage (as getopt tools use it, 1 being left to a crash), 3 refused by the board (the reason is
 *  printed), 4 the board cannot be reached or did not answer in time. */
/** `notHeld`: `forkbench sandbox check` found a promise of the agents' sandbox not held (or no sandbox). */
export const Exit = { ok: 0, usage: 2, rejected: 3, unreachable: 4, notHeld: 5 } as const;

/** The exit codes as the usage text lists them. */
export const EXIT_CODES_TEXT = `Exit codes: ${Exit.ok} ok, ${Exit.usage} usage, ${Exit.rejected} refused by the board, ${Exit.unreachable} cannot reach the board or no answer in time, ${Exit.notHeld} a sandbox check found a promise not held`;

/** A refusal without the program's name, as the MCP server returns it to a tool call. */
export const refusal = (reason: string, message: string): string => `refused (${reason}): ${message}`;

/** A refusal as printed on stderr by the CLI and the fence hooks. */
export const refusalLine = (reason: string, message: string): string => `forkbench: ${refusal(reason, message)}`;
