import { parseArgs } from 'node:util';
import { AGENT_METHODS, AgentEnv, methodSpec, synopsis, WRITE_KEY_PATTERN, WRITE_KEY_RULE, type MethodSpec } from '../../src-shared/protocol/agentMethods.js';
import { Exit, EXIT_CODES_TEXT } from '../../src-shared/protocol/cliWords.js';
import { jsonShowControls } from '../../src-shared/text/controlChars.js';
import { formatRefusalLine, formatResult, refusalReason } from './format.js';
import { callWrite, DEFAULT_BOARD_WAIT_MS, DEFAULT_CALL_TIMEOUT_MS, RpcClient, RpcFailure, Unreachable, type ReachOptions } from './rpcClient.js';
import { ReportBounds } from '../../src-shared/usage/reportBounds.js';

/** A local socket connects at once or not at all; 5 s covers a host busy starting on a loaded machine. */
const CONNECT_TIMEOUT_MS = 5000;
/** A hook's call: the board answers a status in about a millisecond; two seconds is a host under load, and
 *  longer would be felt as the agent's CLI freezing on every tool call. */
const HOOK_CALL_TIMEOUT_MS = 2000;
/** The environment that overrides the two waits (the usage text names them with their defaults). */
const WaitEnv = { call: 'FORKBENCH_TIMEOUT_MS', boardDown: 'FORKBENCH_BOARD_WAIT_MS' } as const;

/**
 * `forkbench`: the board from an agent's shell. It keeps no state between calls: the socket, the agent's
 * secret and its id come from the environment the host launched the agent with, and fencing tokens come
 * back from `claim` for the agent to pass on.
 *
 * Exit codes (src-shared/protocol/cliWords.ts, shared with the fence hooks): ok, usage, refused by the board
 * (the reason is printed), cannot reach the board or it did not answer in time (WaitEnv.call, default
 * DEFAULT_CALL_TIMEOUT_MS per call). A board that is down (its host restarting) is waited for first, up to
 * WaitEnv.boardDown (default DEFAULT_BOARD_WAIT_MS).
 */
export { Exit };

class UsageError extends Error {}

/** What a task id looks like on the command line; anything else in its place is the next argument. */
const TASK_ID = /^T-\d{1,9}$/i;
/**
 * The writes that may leave the task id out and mean the one task the agent holds: the two an agent types
 * most while working, where a forgotten id used to cost a usage screen. `renew` and `release` still ask for
 * the id, so a bare `release` typed by mistake gives nothing away.
 */
const HELD_TASK_METHODS: ReadonlySet<string> = new Set(['note', 'done']);

/** One JSON object as printed: a title from an old journal may hold C1 or bidi controls, which
 *  JSON.stringify leaves raw; escaped, they cannot act on the terminal and the line still parses the same. */
const printJson = (v: unknown): string => jsonShowControls(JSON.stringify(v));

function usage(): string {
  const lines = ['usage: forkbench <command> [args] [--json]', '', 'Board commands (for agents):'];
  for (const m of AGENT_METHODS) if (!m.git) lines.push(`  ${synopsis(m).padEnd(44)} ${m.summary}`);
  lines.push(
    '',
    'Other commands:',
    '  forkbench mcp                                 run an MCP server on stdio with the same operations as tools',
    "  forkbench status STATE --hook                 as a CLI's hook: the prompt from the event on stdin, no output, exit 0",
    "  forkbench statusline                          as Claude Code's status line: its rate limits from the JSON on stdin to the board, a line out, exit 0",
    '  forkbench serve [FOLDER] [--port N]           open FOLDER (default: here) as a Thread in the browser',
    "  forkbench sandbox check [--json]              start a fresh agent sandbox and report each promise held or not",
    '',
    `The board is found through ${AgentEnv.socket} and ${AgentEnv.secret}, set in every agent pane.`,
    'Every write takes --key K (an idempotency key; one is made per command when none is given): a write whose',
    'answer was lost is sent again with its key within the timeout, and the board answers it with its first outcome.',
    EXIT_CODES_TEXT,
    `(${WaitEnv.call}, default ${DEFAULT_CALL_TIMEOUT_MS}); a board that is down is waited for first`,
    `(${WaitEnv.boardDown}, default ${DEFAULT_BOARD_WAIT_MS}).`,
  );
  return lines.join('\n');
}


/**
 * Turn argv into method params, checked against the shared method table. `heldTask` is set when a write
 * that names a task was given none (`forkbench note "fixed it"`, `forkbench done`): the caller fills in the
 * one task the agent holds, which is what an agent with one claim means.
 */
export function parseCommand(spec: MethodSpec, argv: string[]): { params: Record<string, unknown>; json: boolean; heldTask: boolean } {
  const options: Record<string, { type: 'string' | 'boolean' }> = { json: { type: 'boolean' } };
  for (const p of spec.params) if (!p.positional) options[p.name] = { type: p.kind === 'flag' ? 'boolean' : 'string' };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const params: Record<string, unknown> = {};
  let positional = spec.params.filter((p) => p.positional);
  const given = parsed.positionals;
  const first = positional[0];
  const heldTask = HELD_TASK_METHODS.has(spec.name) && first?.kind === 'taskId' && !TASK_ID.test(given[0] ?? '');
  if (heldTask) positional = positional.slice(1);
  if (given.length > positional.length) {
    // The last positional takes the rest, so `forkbench note T-1 fixed the parser` needs no quotes.
    const last = positional.at(-1);
    if (!last || last.kind === 'taskId') throw new UsageError(`too many arguments for ${spec.name}: ${synopsis(spec)}`);
    given.splice(positional.length - 1, given.length, given.slice(positional.length - 1).join(' '));
  }
  positional.forEach((p, i) => {
    if (given[i] !== undefined) params[p.name] = given[i];
    else if (p.required) throw new UsageError(`missing ${p.name}: ${synopsis(spec)}`);
  });
  for (const p of spec.params) {
    if (p.positional) continue;
    const v = parsed.values[p.name];
    if (v === undefined) continue;
    if (p.kind === 'key') {
      if (typeof v !== 'string' || !WRITE_KEY_PATTERN.test(v)) throw new UsageError(`--key takes ${WRITE_KEY_RULE}, not '${String(v)}'`);
      params[p.name] = v;
    } else if (p.kind === 'token') {
      if (typeof v !== 'string' || !/^\d{1,15}$/.test(v) || Number(v) < 1) throw new UsageError(`--token takes a positive whole number, not '${String(v)}'`);
      params[p.name] = Number(v);
    } else if (p.kind === 'count') {
      if (typeof v !== 'string' || !/^\d{1,13}$/.test(v)) throw new UsageError(`--${p.name} takes a whole number of tokens, 0 or more, not '${String(v)}'`);
      // One turn's bound (reportBounds.ts), said here with the option's name rather than after a round trip.
      if (Number(v) > ReportBounds.maxTokensPerKind) throw new UsageError(`--${p.name} takes a whole number of tokens up to ${ReportBounds.maxTokensPerKind.toLocaleString('en')} (one turn's most), not '${v}'`);
      params[p.name] = Number(v);
    } else if (p.kind === 'usd') {
      if (typeof v !== 'string' || !/^\d{1,7}(\.\d{1,12})?$/.test(v)) throw new UsageError(`--${p.name} takes US dollars as a plain number, like 0.0125, not '${String(v)}'`);
      if (Number(v) > ReportBounds.maxUsd) throw new UsageError(`--${p.name} takes US dollars up to ${ReportBounds.maxUsd.toLocaleString('en')} (one turn's most), not '${v}'`);
      params[p.name] = Number(v);
    } else params[p.name] = v;
  }
  // A report's turn id, made once per invocation when none is given: the board counts one id once.
  const turnId = spec.params.find((p) => p.kind === 'turnId');
  if (turnId && params[turnId.name] === undefined) params[turnId.name] = `report-${crypto.randomUUID()}`;
  if (typeof params.taskId === 'string') params.taskId = params.taskId.toUpperCase();
  // One key per invocation: a retry of this command's write (callWrite) sends the same one.
  if (spec.write && params.key === undefined) params.key = crypto.randomUUID();
  return { params, json: parsed.values.json === true, heldTask };
}

/** The one task this agent holds, for a write that named none; more or fewer is a usage error naming them. */
async function heldTaskId(client: RpcClient, agentId: string | undefined, spec: MethodSpec): Promise<string> {
  const board = await client.call('board', {});
  const held = board.tasks.filter((t) => t.claim && t.claim.agentId === agentId).map((t) => t.id);
  if (held.length === 1) return held[0] as string;
  const which = held.length ? `you hold ${held.join(', ')}: name one` : 'you hold no task';
  throw new UsageError(`${spec.name} needs a task id and ${which}: ${synopsis(spec)}`);
}

interface Io {
  out(s: string): void;
  err(s: string): void;
  env: NodeJS.ProcessEnv;
  /** A hook's event (`status --hook`); defaults to reading this process's stdin. */
  stdin?: () => Promise<string>;
}

export async function run(argv: string[], io: Io): Promise<number> {
  const [cmd, ...rest] = argv;
  const json = rest.includes('--json');
  const usageFail = (msg: string, spec?: MethodSpec) => usageFailure(io, json, msg, spec);
  if (!cmd || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    io.out(usage());
    return cmd ? Exit.ok : Exit.usage;
  }
  if (cmd === 'mcp') {
    const { runMcpServer } = await import('./mcpServer.js');
    await runMcpServer(io.env);
    return Exit.ok;
  }
  if (cmd === 'serve') {
    const { runServeCommand } = await import('../serve/serveCommand.js');
    // serve's output is written and its hosts closed by now; exit even if a library left a handle open
    process.exit(await runServeCommand(rest));
  }
  if (cmd === 'sandbox') {
    if (rest.filter((a) => a !== '--json').join(' ') !== 'check') return usageFail(`unknown sandbox command '${rest.join(' ')}': the one there is is 'forkbench sandbox check [--json]'`);
    const { sandboxCheck, describeCheck } = await import('../sandbox/sandboxCheck.js');
    const report = await sandboxCheck(io.env);
    io.out(json ? printJson(report) : describeCheck(report));
    return report.contained && report.promises.every((p) => p.held) ? Exit.ok : Exit.notHeld;
  }
  if (cmd === 'statusline') return runStatusLine(rest, io);
  // `forkbench queue move T-7 --before T-3` is `queue-move`: the queue's one write, said as people say it.
  if (cmd === 'queue' && rest[0] === 'move') return run(['queue-move', ...rest.slice(1)], io);
  const spec = methodSpec(cmd);
  if (!spec) return usageFail(`unknown command '${cmd}'`);
  // `status --hook`: run by an agent CLI's hook, which must never be disturbed: nothing on stdout (some
  // CLIs read a hook's stdout as a decision or as context for the model), exit 0 whatever happens.
  const hook = cmd === 'status' && rest.includes('--hook');
  if (hook) return runHookStatus(rest.filter((a) => a !== '--hook'), io, spec);
  let params: Record<string, unknown>;
  let heldTask: boolean;
  try {
    ({ params, heldTask } = parseCommand(spec, rest));
  } catch (err) {
    if (err instanceof UsageError) return usageFail(err.message, spec);
    throw err;
  }
  return callBoard(spec, params, json, io, heldTask);
}

/** A hook's status report: the prompt's text from the hook's event on stdin, and no output but errors. */
async function runHookStatus(argv: string[], io: Io, spec: MethodSpec): Promise<number> {
  let params: Record<string, unknown>;
  try {
    params = parseCommand(spec, argv).params;
  } catch (err) {
    io.err(`forkbench: ${(err as Error).message}`);
    return Exit.ok;
  }
  const { readHookEvent, readHookStdin } = await import('./hookInput.js');
  const event = readHookEvent(await (io.stdin ?? readHookStdin)());
  if (event.skip) return Exit.ok;
  if (params.text === undefined && event.text && params.state === 'needs-input') params.text = event.text;
  // A hook holds its CLI up while it runs: a board that is down or slow is not waited for.
  const env = { ...io.env, [WaitEnv.call]: String(HOOK_CALL_TIMEOUT_MS), [WaitEnv.boardDown]: '0' };
  await callBoard(spec, params, false, { ...io, env, out: () => undefined });
  return Exit.ok;
}

/**
 * Claude Code's status line (statusLine.ts): the rate-limit readings in the JSON on stdin go to the board as
 * `limits`, and a line goes out: the person's own status line's when their settings name one, else ours. Like a
 * hook it holds its CLI's display up while it runs, so a board that is down or slow is not waited for, and it
 * exits 0 whatever happens (what went wrong is said on stderr, which Claude Code does not show as the line).
 */
async function runStatusLine(argv: string[], io: Io): Promise<number> {
  if (argv.length) return usageFailure(io, false, `statusline takes no arguments (Claude Code gives it its status as JSON on stdin), not '${argv.join(' ')}'`);
  const { readHookStdin } = await import('./hookInput.js');
  const { readStatus, runTheirs, theirStatusCommand, STATUS_STDIN_WAIT_MS } = await import('./statusLine.js');
  const raw = await (io.stdin ?? (() => readHookStdin(process.stdin, STATUS_STDIN_WAIT_MS)))();
  const status = await readStatus(raw);
  const project = status.ok ? status.input.workspace?.project_dir : undefined;
  const theirs = theirStatusCommand(io.env, project);
  const shown = theirs ? runTheirs(theirs, raw, io.env, project) : Promise.resolve();
  const spec = methodSpec('limits');
  if (status.ok && status.readings.length && spec) {
    const { limitsText } = await import('../../src-shared/usage/limitsText.js');
    const env = { ...io.env, [WaitEnv.call]: String(HOOK_CALL_TIMEOUT_MS), [WaitEnv.boardDown]: '0' };
    await callBoard(spec, { readings: limitsText(status.readings) }, false, { ...io, env, out: () => undefined });
  }
  await shown;
  if (!status.ok) io.err(`forkbench: ${status.message}`);
  if (!theirs) io.out(status.ok ? status.line : 'forkbench');
  return Exit.ok;
}

/** A usage error, said once: as JSON, or a mistyped command with its own synopsis (an unknown one gets the list). */
function usageFailure(io: Io, json: boolean, msg: string, spec?: MethodSpec): number {
  if (json) io.out(printJson({ ok: false, error: { reason: 'usage', message: msg } }));
  else io.err(spec ? `forkbench: ${msg}\n(forkbench help lists every command)` : `forkbench: ${msg}\n\n${usage()}`);
  return Exit.usage;
}

async function callBoard(spec: MethodSpec, params: Record<string, unknown>, json: boolean, io: Io, heldTask = false): Promise<number> {
  const socket = io.env[AgentEnv.socket];
  const secret = io.env[AgentEnv.secret];
  const unreachable = (msg: string) => {
    if (json) io.out(printJson({ ok: false, error: { reason: 'unreachable', message: msg } }));
    else io.err(`forkbench: ${msg}`);
    return Exit.unreachable;
  };
  if (!socket || !secret) return unreachable(`${AgentEnv.socket} and ${AgentEnv.secret} are not set: run this inside an agent pane that Forkbench launched`);
  let client: RpcClient;
  const t = io.env[WaitEnv.call];
  const timeoutMs = t && /^\d{1,9}$/.test(t) && Number(t) > 0 ? Number(t) : DEFAULT_CALL_TIMEOUT_MS;
  const w = io.env[WaitEnv.boardDown];
  const downWaitMs = w && /^\d{1,9}$/.test(w) ? Number(w) : DEFAULT_BOARD_WAIT_MS;
  const reach: ReachOptions & { downWaitMs: number } = {
    connectTimeoutMs: Math.min(timeoutMs, CONNECT_TIMEOUT_MS),
    downWaitMs,
    // stderr, so a --json caller's stdout stays one JSON document
    onWaiting: (m) => io.err(`forkbench: ${m}`),
  };
  try {
    client = await RpcClient.reach(socket, secret, { ...reach, callTimeoutMs: timeoutMs });
  } catch (err) {
    return unreachable((err as Error).message);
  }
  try {
    if (heldTask) {
      params.taskId = await heldTaskId(client, io.env[AgentEnv.agentId], spec);
      io.err(`forkbench: ${spec.name} on ${params.taskId as string}, the one task you hold`);
    }
    // A keyed write is sent again while its answer is lost; a read is asked once.
    const result =
      typeof params.key === 'string'
        ? await callWrite(client, socket, secret, spec.name, params as Record<string, unknown> & { key: string }, { timeoutMs, reach, onRetry: (m) => io.err(`forkbench: ${m}`) })
        : await client.call(spec.name, params);
    io.out(json ? printJson({ ok: true, result }) : formatResult(spec.name, result));
    return Exit.ok;
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, json, err.message, spec);
    if (err instanceof RpcFailure) {
      const reason = refusalReason(err);
      if (json) io.out(printJson({ ok: false, error: { reason, message: err.error.message } }));
      else io.err(formatRefusalLine(reason, err.error.message));
      return Exit.rejected;
    }
    if (err instanceof Unreachable) return unreachable(err.message);
    throw err;
  } finally {
    client.close();
  }
}

export async function main(): Promise<void> {
  // A reader that has had enough (`forkbench board | head -1`) closes the pipe: what is left unwritten is not
  // wanted, which is no failure of this command and no stack trace for the person (issue 44). Any other
  // error writing the output is one.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? Exit.ok);
  });
  const code = await run(process.argv.slice(2), {
    out: (s) => process.stdout.write(`${s}\n`),
    err: (s) => process.stderr.write(`${s}\n`),
    env: process.env,
  });
  process.exitCode = code;
}
