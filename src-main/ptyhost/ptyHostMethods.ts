import { z } from 'zod';
import { ContainmentSchema } from '../../src-shared/agents/containment.js';
import { procedure, type OutputOf, type ParamsOf, type ProcedureTable } from '../../src-shared/protocol/procedure.js';
import { TerminalSize } from '../../src-shared/terminal/terminalSize.js';
import type { TerminalSignal } from '../pty/headlessMirror.js';
import type { PtyExit, PtyFlowStats } from '../pty/paneSession.js';
import type { PaneListing, PaneMeta } from './protocol.js';

/**
 * The pty host's methods, stated once: each one's params as the schema the pty host validates a request
 * against at its edge (ptyHostServer, through the one procedure edge of src-main/base/procedureServer), and
 * its answer (`output`) as the schema the board host validates the answer against at its own (ptyHostClient). A bad
 * request is answered with an error naming the field and reaches neither node-pty nor a PtySession; a bad
 * answer fails its request and nothing else. The envelopes around them (requests, acks, answers, pane
 * events) are checked here too.
 */

export const PtyHostLimits = {
  /** Data frames carry a pane's number as a u32 (frames.ts). */
  maxPane: 0xffff_ffff,
  /** A notice's text (PaneNoticeLimits.maxChars is what a pane shows); the bound only refuses a broken peer's
   *  megabytes before they are copied about. */
  maxNoticeChars: 16_000,
  /** A consumer is a window's id, a short token; the bound stops a broken peer from making map keys of
   *  megabytes. */
  maxConsumerChars: 128,
} as const;

/** A string handed to the OS as a C string (a program, an argument, an environment entry, a folder): a NUL
 *  would cut it short, or worse, inside node-pty. */
const cString = z.string().refine((s) => !s.includes('\0'), { message: 'holds a NUL character, which no program, argument, folder or environment entry can' });

const pane = z.number().int().min(1).max(PtyHostLimits.maxPane);
const pid = z.number().int().min(1);
const cols = z.number().int().min(TerminalSize.minCols).max(TerminalSize.maxCols);
const rows = z.number().int().min(TerminalSize.minRows).max(TerminalSize.maxRows);
const consumer = z.string().min(1).max(PtyHostLimits.maxConsumerChars);
const paneOnly = z.object({ pane });
const nothing = z.object({});

const meta: z.ZodType<PaneMeta, PaneMeta> = z.object({
  threadKey: z.string(),
  agentId: z.string().min(1),
  secretDigest: z.string().regex(/^[0-9a-f]{64}$/, 'is not a SHA-256 digest in hex'),
  socketPath: z.string(),
  profile: z.string(),
  name: z.string(),
  command: z.string().optional(),
  containment: ContainmentSchema.optional(),
  cwd: z.string(),
});

/** JSON leaves out a key whose value is undefined (no signal): the keys are optional on the wire, and there
 *  again as PtyExit has them. */
const ptyExit = z
  .object({ exitCode: z.number().int(), signal: z.number().int().optional(), signalName: z.string().optional() })
  .transform((e): PtyExit => ({ exitCode: e.exitCode, signal: e.signal, signalName: e.signalName }));

const flowStats: z.ZodType<PtyFlowStats> = z.object({
  paused: z.boolean(),
  maxUnackedChars: z.number().min(0),
  mirrorUnackedChars: z.number().min(0),
  batchedChars: z.number().min(0),
  droppedChars: z.number().min(0),
});

const listing: z.ZodType<PaneListing> = z.object({
  pane,
  pid,
  meta,
  cols,
  rows,
  dead: z.boolean(),
  exit: ptyExit.nullable(),
  ended: z.object({ at: z.number().finite(), watched: z.boolean() }).nullable(),
  quietForMs: z.number().min(0),
  bracketedPaste: z.boolean(),
});

/** A terminal signal as the pty host's mirror parsed it (headlessMirror.ts). */
const terminalSignal: z.ZodType<TerminalSignal> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('notify'), text: z.string() }),
  z.object({ kind: z.literal('bell') }),
  z.object({ kind: z.literal('title'), text: z.string() }),
  z.object({ kind: z.literal('status'), state: z.string(), fields: z.record(z.string(), z.string()) }),
  z.object({ kind: z.literal('prompt'), mark: z.enum(['A', 'B', 'C', 'D']) }),
]);

const spawnParams = z.object({
  command: cString.min(1),
  args: z.array(cString),
  cwd: cString.refine((s) => s.startsWith('/'), { message: 'is not an absolute folder' }),
  env: z.record(cString, cString.optional()),
  cols,
  rows,
  meta,
  /** PtySpawnOptions.contained: the command is the agent's sandbox. */
  contained: z.boolean().optional(),
});
export type SpawnParams = z.output<typeof spawnParams>;

const hello = z.object({ version: z.string(), protocol: z.number().int() });
/** `adopted`: the greeting process was taken as the board host (its ancestry is no pane's). Otherwise it
 *  may still prove the adoption key against `challenge` (`prove`). An answer to a board host of another
 *  version carries neither: it refuses us. */
const helloAnswer = z.object({ version: z.string(), protocol: z.number().int(), pid, challenge: z.string().optional(), adopted: z.boolean().optional() });
export type HelloAnswer = z.output<typeof helloAnswer>;
const hexProof = z.string().regex(/^[0-9a-f]{64}$/, 'is not an HMAC-SHA256 in hex');

/** Each method: its params' schema (validated by the pty host) and its answer's (validated by the board host). */
export const ptyHostMethods = {
  hello: procedure(hello, helloAnswer),
  /** The adoption key's proof for the hello's challenge (adoptionKey.ts): what the board host that started
   *  this pty host answers when its ancestry alone did not settle who it is. */
  prove: procedure(z.object({ proof: hexProof }), z.null()),
  spawn: procedure(spawnParams, z.object({ pane, pid })),
  list: procedure(nothing, z.array(listing)),
  resize: procedure(z.object({ pane, cols, rows }), z.null()),
  attach: procedure(z.object({ pane, consumer }), z.null()),
  detach: procedure(z.object({ pane, consumer }), z.null()),
  screen: procedure(paneOnly, z.object({ text: z.string(), bracketedPaste: z.boolean() })),
  /** The lines on the pane's screen once its output so far is parsed: the board host's screen matcher reads
   *  them (it keeps no mirror of its own). */
  lines: procedure(paneOnly, z.array(z.string())),
  /** Show a notice of the board host's in the pane's output (PtySession.showNotice): answered once it is
   *  written there, in order with the pane's own output. */
  notice: procedure(z.object({ pane, text: z.string().max(PtyHostLimits.maxNoticeChars) }), z.null()),
  kill: procedure(paneOnly, ptyExit),
  stats: procedure(paneOnly, flowStats),
  /** Kill now (if alive) and forget the pane. */
  dispose: procedure(paneOnly, z.null()),
  /** End every pane and exit: the board host stops and takes its agents with it. */
  shutdown: procedure(nothing, z.null()),
} as const satisfies ProcedureTable;

export type PtyHostMethod = keyof typeof ptyHostMethods;
/** What the board host sends each method and what it gets back. */
export type PtyHostMethods = {
  [M in PtyHostMethod]: { params: ParamsOf<typeof ptyHostMethods, M>; result: OutputOf<typeof ptyHostMethods, M> };
};

/** Ids are echoed back as they came: a safe whole number, so both ends see the same one. */
const id = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** What a board host sends as a control frame: a request (checked further by its method), or an ack. */
export const clientMessage = z.discriminatedUnion('t', [
  z.object({ t: z.literal('req'), id, m: z.unknown(), p: z.unknown() }),
  /** Fire and forget: acks are frequent and nobody waits on them. */
  z.object({ t: z.literal('ack'), pane, consumer, chars: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }),
]);
export type ClientMessage = z.output<typeof clientMessage>;

/** What a pty host sends as a control frame: answers and pane events. */
export const hostMessage = z.union([
  z.object({ t: z.literal('res'), id, ok: z.literal(true), v: z.unknown() }),
  /** `code`: the procedure edge's (`invalid-input`, `unknown-method`, `failed`) or the pty host's own
   *  (`no-such-pane`, `spawn-failed`, `busy`, `invalid-message`). */
  z.object({ t: z.literal('res'), id, ok: z.literal(false), error: z.string(), code: z.string().optional() }),
  z.object({ t: z.literal('death'), pane }),
  z.object({ t: z.literal('exit'), pane, exit: ptyExit }),
  z.object({ t: z.literal('paste-mode'), pane, on: z.boolean() }),
  z.object({ t: z.literal('signal'), pane, sig: terminalSignal }),
]);
export type HostMessage = z.output<typeof hostMessage>;

/** The id of a message that is no message of ours, when it has a usable one: its sender is waiting on it. */
export function idOf(raw: unknown): number | null {
  const got = (raw as { id?: unknown } | null)?.id;
  return id.safeParse(got).success ? (got as number) : null;
}
