/**
 * The real OpenCode CLI (opencode-ai, a native binary) through its real profile, in a real pty, against a live
 * ThreadHost and a scripted model on 127.0.0.1: the agent reaches the board through the forkbench MCP server
 * the profile configures (claim, note, renew) and through the `forkbench` command in its bash tool, and no
 * permission dialog stops it.
 *
 * The model is a provider in the isolated HOME's global config ($XDG_CONFIG_HOME/opencode/opencode.json),
 * standing in for the one a person has set up: an OpenAI-compatible provider (its SDK is bundled in the
 * binary, so nothing is installed at run time) whose baseURL is the fake server.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import headlessModule from '@xterm/headless';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { type ChatRequest, type ChatStep, messageText, openAiChat, toolResults } from './fakeOpenAiChat.js';
import { type FakeModelServer, missingCli, openRealCliThread, type RealCliThread, startFakeModelServer } from './harness.js';

const { Terminal } = headlessModule;

// `opencode mcp list` runs in the pane's own environment, read from /proc.
const skip = missingCli('opencode') ?? (fs.existsSync('/proc/self/environ') ? null : "needs /proc to read a pane's environment");
const ROOT = join(import.meta.dirname, '..', '..', '..');
const COLS = 140;
const ROWS = 40;
const MODEL = 'fake-model';
const PROVIDER = 'forkbench-fake';
const NOTE_TEXT = 'started on hello.txt';

/** Nothing but 127.0.0.1: no models.dev catalogue, no update check, no share links, no LSP downloads. */
const OFFLINE_ENV = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
};

let thread: RealCliThread | null = null;
let server: FakeModelServer | null = null;
const cleanups: (() => void)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  await thread?.dispose();
  thread = null;
  await server?.close();
  server = null;
});

/** The global config a person who uses OpenCode with their own OpenAI-compatible endpoint would have. */
function writeUserConfig(t: RealCliThread, baseURL: string): void {
  const dir = join(t.home, '.config', 'opencode');
  fs.mkdirSync(dir, { recursive: true });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `${PROVIDER}/${MODEL}`,
    provider: {
      [PROVIDER]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Forkbench fake model',
        options: { baseURL, apiKey: 'fake-key' },
        models: { [MODEL]: { name: 'Fake model', tool_call: true, limit: { context: 200_000, output: 8_192 } } },
      },
    },
  };
  fs.writeFileSync(join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  // OpenCode installs its plugin SDK into the config folder on first start (npm, in the background) and
  // skips that once node_modules is there and the lock file lists it: the state after a person's first run.
  const { version } = JSON.parse(fs.readFileSync(join(ROOT, 'node_modules', 'opencode-ai', 'package.json'), 'utf8')) as { version: string };
  const deps = { '@opencode-ai/plugin': version };
  fs.writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ dependencies: deps }, null, 2)}\n`);
  fs.writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ lockfileVersion: 3, requires: true, packages: { '': { dependencies: deps } } }, null, 2)}\n`);
  fs.mkdirSync(join(dir, 'node_modules'), { recursive: true });
}

/** The script: claim T-1, note on it, renew it, run `forkbench board` in bash, then say done. */
function script(body: ChatRequest): ChatStep {
  const names = (body.tools ?? []).map((t) => t.function.name);
  // Side requests (the session title) come without tools.
  if (names.length === 0) return { text: 'Forkbench board check' };
  const tool = (method: string) => {
    const name = names.find((n) => n.toLowerCase().includes('forkbench') && n.endsWith(method));
    if (!name) throw new Error(`no forkbench ${method} tool among: ${names.join(', ')}`);
    return name;
  };
  const results = toolResults(body);
  const token = () => {
    const m = /"token":\s*(\d+)/.exec(messageText(results[0]!));
    if (!m) throw new Error(`no token in the claim's result: ${messageText(results[0]!)}`);
    return Number(m[1]);
  };
  switch (results.length) {
    case 0:
      return { tool: tool('claim'), args: { taskId: 'T-1' } };
    case 1:
      return { tool: tool('note'), args: { taskId: 'T-1', text: NOTE_TEXT, token: token() } };
    case 2:
      return { tool: tool('renew'), args: { taskId: 'T-1', token: token() } };
    case 3:
      return { tool: 'bash', args: { command: 'forkbench board', description: 'Show the board' } };
    default:
      return { text: 'Done: T-1 is claimed, noted and renewed.' };
  }
}

/**
 * A headless terminal fed with the pane's output, to read the screen as a person sees it: `now()` is the
 * screen, `seen()` every line that was ever on it (a dialog that came and went still shows there).
 */
function screenOf(t: RealCliThread, agentId: string, cols: number, rows: number): { now(): string; seen(): string } {
  const term = new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
  const seen = new Set<string>();
  term.write(t.output(agentId));
  const read = () => {
    const b = term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines;
  };
  const sub = t.host.onPaneData.event(({ agentId: id, data }) => {
    if (id === agentId) term.write(data, () => read().forEach((l) => l.trim() && seen.add(l.trim())));
  });
  cleanups.push(() => {
    sub.dispose();
    term.dispose();
  });
  return { now: () => read().join('\n'), seen: () => [...seen].join('\n') };
}

/** Polls `check` until it returns a value; fails with `what` and the pane's screen after `timeoutMs`. */
async function until<T>(check: () => T | undefined | null | false, timeoutMs: number, what: string, screen: () => string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the screen:\n${screen()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The environment a pane's process started with: what the profile gave it (Linux: /proc/PID/environ). */
function paneEnv(pid: number): NodeJS.ProcessEnv {
  const text = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    text
      .split('\0')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** Runs a command to its end; aborted by the test's clean-up if the test ends first. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; out: string }> {
  const abort = new AbortController();
  cleanups.push(() => abort.abort());
  return new Promise((resolve) => {
    execFile(command, args, { env, cwd, timeout: 30_000, signal: abort.signal }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, out: `${stdout}${stderr}` }),
    );
  });
}

const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

describe.skipIf(skip !== null)(`OpenCode (real CLI) on the board${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('claims, notes and renews over MCP and reads the board with its bash tool, without asking', async () => {
    server = await startFakeModelServer(openAiChat(script));
    thread = await openRealCliThread('opencode', OFFLINE_ENV);
    const t = thread;
    const srv = server;
    writeUserConfig(t, `${srv.url}/v1`);

    const agent = await t.host.launch('opencode', { cols: COLS, rows: ROWS });
    const screen = screenOf(t, agent.id, COLS, ROWS);
    const failing = (err: Error) => {
      throw new Error(`${err.message}; the screen:\n${screen.now()}`);
    };
    // No first-run screens: the prompt comes up with the configured model.
    await until(() => /Ask anything/.test(screen.now()), 25_000, 'the TUI prompt', screen.now);
    t.host.input(agent.id, 'Take task T-1 from the board and check the board.\r');
    const mine = (kind: BoardEvent['kind']) => (e: BoardEvent) =>
      e.kind === kind && 'taskId' in e && e.taskId === 'T-1' && ('agentId' in e ? e.agentId : 'by' in e ? e.by : undefined) === agent.id;
    const grant = await t.event(mine('grant'), 20_000, 'the agent claiming T-1').catch(failing);
    const note = await t.event(mine('note'), 10_000, 'the agent noting on T-1').catch(failing);
    await until(() => /Done: T-1 is claimed/.test(screen.now()), 15_000, 'the final answer', screen.now);

    // The board: claimed, noted, renewed (the note renews too, then the explicit renew), nothing refused.
    expect(grant.kind === 'grant' && grant.token).toBeGreaterThan(0);
    expect(note.kind === 'note' && note.text).toBe(NOTE_TEXT);
    const events = t.host.board.logTail(1_000);
    const renewals = events.filter((e) => mine('renew')(e) && e.seq > note.seq);
    expect(renewals.map((e) => e.kind === 'renew' && e.via)).toEqual(['write', 'write']);
    expect(events.filter((e) => e.kind === 'write-rejected')).toEqual([]);

    // What went back to the model: OpenCode's tools and the board's, the instructions, and each result.
    const main = srv.requests.map((r) => r.body as ChatRequest).filter((b) => (b.tools ?? []).length > 0);
    const names = main[0]!.tools!.map((x) => x.function.name);
    expect(names).toEqual(expect.arrayContaining(['bash', 'forkbench_claim', 'forkbench_note', 'forkbench_renew', 'forkbench_board']));
    const system = main[0]!.messages.filter((m) => m.role === 'system').map(messageText).join('\n');
    expect(system).toContain(`You are agent "${agent.id}"`);
    const results = toolResults(main[main.length - 1]!).map(messageText);
    expect(results).toHaveLength(4);
    const token = grant.kind === 'grant' ? grant.token : -1;
    expect(JSON.parse(results[0]!)).toMatchObject({ taskId: 'T-1', agentId: agent.id, token });
    expect(JSON.parse(results[1]!)).toMatchObject({ taskId: 'T-1', token });
    expect(JSON.parse(results[2]!)).toMatchObject({ taskId: 'T-1', token });
    expect(results[3]).toContain('T-1');
    expect(results[3]).toContain('write hello.txt');
    expect(results[3]).toContain(agent.id);

    // Nothing asked a person: the calls were on the screen, and never a permission dialog.
    expect(screen.seen()).toContain('forkbench_renew');
    expect(screen.seen()).not.toMatch(/Permission required|Allow once|Allow always/);

    // The profile's environment as the pane got it: `opencode mcp list` there sees the board's server.
    const listed = await run('opencode', ['mcp', 'list'], paneEnv(agent.pid!), t.folder);
    expect(listed.code, listed.out).toBe(0);
    expect(stripAnsi(listed.out)).toMatch(/✓ forkbench\s+connected/);
  }, 90_000);
});
