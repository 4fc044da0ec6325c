/**
 * The real Gemini CLI, launched through its real profile in a real pty by a live ThreadHost, talking to a
 * fake Gemini API on 127.0.0.1 that plays a scripted model: claim T-1 over MCP, note on it and renew it with
 * the claim's token, run `forkbench board` through the CLI's own shell tool, then answer and stop.
 *
 * What this proves about the profile: its Gemini home (the user's settings with the board's server merged
 * in) is the one the CLI reads, the board's MCP server starts and its tools reach the board under the
 * agent's identity, the folder needs no trust dialog, and neither the MCP tools nor `forkbench` in the shell
 * stop at an approval dialog (a waiting dialog would let the lease lapse, and here would keep the renew from
 * ever arriving). And `gemini mcp list`, run with the environment the pane got, finds the server connected.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { missingCli, openRealCliThread, type RealCliThread } from './harness.js';
import { startFakeGemini, startProxyTrap, type Conversation, type FakeGemini, type ProxyTrap, type Script, type Turn } from './fakeGemini.js';

const missing = missingCli('gemini');
const GEMINI = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'gemini');
const NOTE = 'Starting on hello.txt (a note from the scripted model).';
const FINAL = 'T-1 is claimed, noted and renewed; the board lists it.';
const READY = 'Board instructions received; standing by.';

/**
 * Everything Gemini's pane gets besides what the profile and harness set: the fake API and a key. The proxy
 * variables point at a trap on 127.0.0.1 that must stay untouched: anything the CLI sends through its
 * proxy-aware HTTP stack to an address other than 127.0.0.1 (telemetry, update checks) lands there.
 */
function geminiEnv(baseUrl: string, trapUrl: string): Record<string, string> {
  return {
    GEMINI_API_KEY: 'forkbench-test-key',
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    HTTPS_PROXY: trapUrl,
    HTTP_PROXY: trapUrl,
    https_proxy: trapUrl,
    http_proxy: trapUrl,
    NO_PROXY: '127.0.0.1',
    no_proxy: '127.0.0.1',
  };
}

/**
 * What a person who has used Gemini CLI before has in ~/.gemini/settings.json: the API key picked as the way
 * to sign in (else the first screen asks), and usage statistics, telemetry and update checks off (else it
 * calls Google at start). The profile merges this file into the agent's own Gemini home.
 */
function seedHome(home: string): void {
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  };
  fs.mkdirSync(join(home, '.gemini'), { recursive: true });
  fs.writeFileSync(join(home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
}

/**
 * The name Gemini gives one of the board's MCP tools: `mcp_forkbench_claim` in 0.61; older releases used
 * `forkbench__claim` or the bare name.
 */
function boardTool(c: Conversation, tool: string): string | undefined {
  return c.tools.find((n) => n === `mcp_forkbench_${tool}`) ?? c.tools.find((n) => n === `forkbench__${tool}`) ?? c.tools.find((n) => n === tool);
}

/** A call's result is a failure if the CLI reported an error or the board refused it. */
const failed = (result: string) => /"error"|refused \(/.test(result);

/** The scripted model: each step follows from the tool results the CLI has sent back so far. */
function boardScript(): Script {
  return {
    next(c): Turn {
      const names = { claim: boardTool(c, 'claim'), note: boardTool(c, 'note'), renew: boardTool(c, 'renew') };
      if (!names.claim || !names.note || !names.renew) return { text: `The board's tools are missing; offered: ${c.tools.join(', ')}` };
      const called = (name: string) => c.calls.find((call) => call.name === name);
      const claim = called(names.claim);
      if (!claim) return { call: names.claim, args: { taskId: 'T-1' } };
      // The result is the MCP tool's text (the board's JSON), wrapped and escaped by the CLI.
      const token = Number(/\\?"token\\?":\s*(\d+)/.exec(claim.result)?.[1]);
      if (failed(claim.result) || !token) return { text: `The claim failed: ${claim.result}` };
      if (!called(names.note)) return { call: names.note, args: { taskId: 'T-1', text: NOTE, token } };
      if (!called(names.renew)) return { call: names.renew, args: { taskId: 'T-1', token } };
      if (!called('run_shell_command')) return { call: 'run_shell_command', args: { command: 'forkbench board', description: 'Show the task board' } };
      return { text: FINAL };
    },
  };
}

/** The pane's text without terminal control sequences. */
function plain(s: string): string {
  return (
    s
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[\d*C/g, ' ')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]/g, '')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b[@-_]/g, '')
  );
}

/** Text compared without any whitespace: the TUI wraps and pads lines as the pane's width makes it. */
const squeeze = (s: string) => s.replace(/\s+/g, '');

/** Resolves once the pane has shown `text` (whitespace ignored); rejects after timeoutMs. */
function paneShows(t: RealCliThread, agentId: string, text: string, timeoutMs: number, what: string): Promise<void> {
  const needle = squeeze(text);
  return new Promise((resolve, reject) => {
    const check = () => squeeze(plain(t.output(agentId))).includes(needle);
    if (check()) return resolve();
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const sub = t.host.onPaneData.event(({ agentId: id }) => {
      if (id !== agentId || !check()) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

/** The environment a process started with (Linux): the pane's, exactly as the profile and host built it. */
function environOf(pid: number): NodeJS.ProcessEnv {
  const raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** Text of Gemini CLI's approval dialogs ("Allow execution of [Shell]?", "Allow once", ...) and trust dialog. */
const APPROVAL_DIALOG = /Allow execution|Allow once|Allow for this session|Allow for all future sessions|Waiting for user confirmation|Do you trust/i;

const NO_PROC = fs.existsSync('/proc/self/environ') ? null : 'needs /proc to read the pane process environment';

describe.skipIf(missing)(`Gemini CLI, the real CLI through its profile${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let t: RealCliThread | undefined;
  let api: FakeGemini | undefined;
  let trap: ProxyTrap | undefined;

  afterEach(async () => {
    await t?.dispose();
    await api?.close();
    await trap?.close();
    t = undefined;
    api = undefined;
    trap = undefined;
  });

  /** A Thread whose panes reach the fake API; `script` plays the model. */
  async function open(script: Script): Promise<RealCliThread> {
    api = await startFakeGemini(script);
    trap = await startProxyTrap();
    t = await openRealCliThread('gemini', geminiEnv(api.url, trap.url));
    seedHome(t.home);
    return t;
  }

  function diagnoser(agentId: string): <T>(p: Promise<T>) => Promise<T> {
    const diagnose = () =>
      `\n--- requests ---\n${api?.summary()}\n--- proxy trap ---\n${trap?.hits.join('\n')}\n--- pane ---\n${plain(t?.output(agentId) ?? '').slice(-6000)}`;
    return async (p) => {
      try {
        return await p;
      } catch (err) {
        throw new Error(`${(err as Error).message}${diagnose()}`);
      }
    };
  }

  it('claims, notes and renews over MCP and lists the board with its shell tool, with no approval prompt', async () => {
    const t = await open(boardScript());
    const agent = await t.host.launch('gemini', { cols: 120, rows: 40 });
    const step = diagnoser(agent.id);

    // The profile's first message (the board instructions, sent by --prompt-interactive) starts the script.
    const isMine = (e: BoardEvent) => 'agentId' in e && e.agentId === agent.id && e.taskId === 'T-1';
    const grant = await step(t.event((e) => e.kind === 'grant' && isMine(e), 45_000, 'the claim of T-1'));
    const note = await step(t.event((e) => e.kind === 'note' && e.by === agent.id && e.taskId === 'T-1', 15_000, 'the note on T-1'));
    // A note renews the lease too; the renew tool's own renew comes after that one.
    const byNote = await step(t.event((e) => e.kind === 'renew' && isMine(e) && e.seq > note.seq, 15_000, 'the renew from the note'));
    const renew = await step(t.event((e) => e.kind === 'renew' && isMine(e) && e.seq > byNote.seq, 15_000, 'the renew of T-1'));
    await step(paneShows(t, agent.id, FINAL, 20_000, 'the final answer'));

    expect(grant).toMatchObject({ kind: 'grant', taskId: 'T-1', agentId: agent.id, by: agent.id });
    expect(note).toMatchObject({ kind: 'note', taskId: 'T-1', by: agent.id, text: NOTE });
    expect(renew).toMatchObject({ kind: 'renew', taskId: 'T-1', agentId: agent.id, via: 'write' });
    if (grant.kind === 'grant' && renew.kind === 'renew') expect(renew.token).toBe(grant.token);
    expect(t.host.board.log().filter((e) => e.kind === 'write-rejected')).toEqual([]);

    // What the CLI sent back for each call, as the model saw it.
    const last = api!.turns.at(-1);
    expect(last?.turn, api!.summary()).toEqual({ text: FINAL });
    const c = last!.conversation;
    // The board instructions reached the model as the session's first message.
    expect(api!.turns[0]?.conversation.text).toContain(`You are agent "${agent.id}" in Forkbench`);
    const result = (name: string | undefined) => c.calls.find((call) => call.name === name);
    for (const tool of ['claim', 'note', 'renew']) {
      const call = result(boardTool(c, tool));
      expect(call, `${tool} was called`).toBeDefined();
      expect(failed(call!.result), `${tool}: ${call!.result}`).toBe(false);
    }
    const shell = result('run_shell_command');
    expect(shell?.args).toMatchObject({ command: 'forkbench board' });
    expect(failed(shell!.result), shell!.result).toBe(false);
    expect(shell!.result).toContain('T-1');
    expect(shell!.result).toContain('write hello.txt');
    expect(shell!.result).toContain(agent.id);

    expect(plain(t.output(agent.id))).not.toMatch(APPROVAL_DIALOG);
    // Only the Gemini API was asked for (no 404s for endpoints the fake lacks), and nothing went to a proxy.
    expect(api!.requests.map((r) => `${r.method} ${r.path}`).filter((p) => !/:(streamGenerateContent|generateContent|countTokens)\b/.test(p))).toEqual([]);
    expect(trap!.hits).toEqual([]);
  }, 90_000);

  it.skipIf(NO_PROC)(`\`gemini mcp list\` with the pane's environment finds the board server connected${NO_PROC ? ` (skipped: ${NO_PROC})` : ''}`, async () => {
    const t = await open({ next: () => ({ text: READY }) });
    const agent = await t.host.launch('gemini', { cols: 120, rows: 40 });
    const step = diagnoser(agent.id);
    // The session is up and has answered its first message: the pane's process is gemini, not the fork
    // that started it.
    await step(paneShows(t, agent.id, READY, 45_000, 'the answer to the first message'));

    const pane = environOf(agent.pid!);
    expect(pane.GEMINI_CLI_HOME, 'the profile gives Gemini a home of its own').toBeTruthy();
    // The profile trusts the folder through GEMINI_CLI_TRUST_WORKSPACE (a subcommand takes no --skip-trust),
    // so `mcp list` run with the pane's own environment sees the same trust; an untrusted folder would list
    // the server as "Disabled".
    expect(pane.GEMINI_CLI_TRUST_WORKSPACE, 'the profile trusts the folder').toBe('true');
    const env = pane;
    const listed = await run(GEMINI, ['mcp', 'list'], { cwd: t.folder, env, timeoutMs: 30_000 });
    expect(listed.code, listed.out).toBe(0);
    expect(plain(listed.out)).toMatch(/forkbench: .*forkbench\.cjs mcp .*Connected/);
    expect(trap!.hits).toEqual([]);
  }, 90_000);
});
