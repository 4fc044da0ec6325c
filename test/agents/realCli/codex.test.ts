/**
 * The real Codex CLI, launched through its real profile in a real pty by a live ThreadHost, talking to a
 * fake OpenAI Responses API on 127.0.0.1 that plays a scripted model: claim T-1 over MCP, note on it and
 * renew it with the claim's token, run `forkbench board` through Codex's own shell tool, then answer.
 *
 * What this proves about the profile: the board's MCP server starts under the agent's identity and Codex
 * reports it connected, its write tools run without an approval dialog (a waiting dialog would let the
 * lease lapse, and here would keep the renew from ever arriving), and what Codex's shell gets from
 * `forkbench`: in Codex's default workspace-write sandbox the board's socket is refused (EPERM), as the
 * profile's instructions tell the agent; with network access for the sandbox (a person's setting), the
 * command lists the board, so PATH and the identity reach the shell.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { delimiter, join } from 'node:path';
import headlessModule from '@xterm/headless';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { AGENT_METHODS } from '../../../src-shared/protocol/agentMethods.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { CLI_SCRIPT } from '../../../src-main/host/cliShim.js';
import { missingCli, openRealCliThread, type RealCliThread } from './harness.js';
import { startEgressTrap, startFakeResponses, type Conversation, type EgressTrap, type FakeResponses, type Turn } from './fakeOpenAiResponses.js';

const { Terminal } = headlessModule;

const missing = missingCli('codex');
const BIN = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin');
const API_KEY = 'sk-forkbench-test-key-0123456789';
const MODEL = 'forkbench-fake-model';
const FINAL = 'T-1 is claimed, noted and renewed; the board was shown.';
const NOTE = 'Starting on hello.txt (a note from the scripted model).';
const COLS = 120;
const ROWS = 40;
const IDENTITY_VARS = ['FORKBENCH_SOCKET', 'FORKBENCH_AGENT_ID', 'FORKBENCH_SECRET', 'FORKBENCH_THREAD_DIR'];

/** The board's tools as Codex 0.171 offers them: the MCP server's tools in the namespace `mcp__<server>`. */
const mcp = (tool: string) => `mcp__forkbench.${tool}`;

/**
 * What a person who has used Codex before has in ~/.codex/config.toml, pointed at the fake API: a model
 * provider of their own with the key from the environment (so no login screen), update checks and
 * analytics off, the project trusted. Off as well: the features that reach the network on start (the
 * plugin catalogue: a git clone from github.com, calls to chatgpt.com) and the background server, which
 * would first copy the whole CLI (~420 MB) into the home. What Codex still fetches for itself goes to the
 * egress trap (see codexEnv). `extra` is appended as is.
 */
function seedHome(home: string, project: string, baseUrl: string, extra = ''): string {
  const codexHome = join(home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true, mode: 0o700 });
  const config = `model = "${MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake Responses API"
base_url = "${baseUrl}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
daemon_auto_start = false
plugins = false
apps = false
remote_plugin = false
plugin_sharing = false
tool_suggest = false

[tui]
show_tooltips = false

[projects.${JSON.stringify(project)}]
trust_level = "trusted"
${extra}`;
  fs.writeFileSync(join(codexHome, 'config.toml'), config, { mode: 0o600 });
  return codexHome;
}

/**
 * The pane's environment besides what the profile and harness set: the key, and every proxy pointed at
 * the trap, so what Codex fetches for itself stays on this machine (the TUI fetches an announcement from
 * raw.githubusercontent.com on every start, with no setting to stop it). Loopback, the fake API, goes direct.
 */
function codexEnv(trap: EgressTrap): Record<string, string> {
  const proxies = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'https_proxy', 'http_proxy', 'all_proxy'];
  return {
    OPENAI_API_KEY: API_KEY,
    ...Object.fromEntries(proxies.map((k) => [k, trap.url])),
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

/** The scripted model: each step follows from the function outputs the CLI has sent back so far. */
function boardScript(): { isAgent(c: Conversation): boolean; next(c: Conversation): Turn } {
  return {
    // The agent's conversation carries the board instructions the profile adds as developer instructions.
    isAgent: (c) => c.text.includes('Forkbench') && c.tools.includes('exec_command'),
    next(c) {
      const called = (name: string) => c.calls.find((call) => call.name === name && call.answered);
      if (!c.tools.includes(mcp('claim'))) return { text: `No board tools were offered, only: ${c.tools.join(', ')}` };
      const claim = called(mcp('claim'));
      if (!claim) return { tool: mcp('claim'), input: { taskId: 'T-1' } };
      const token = Number(/"token":\s*(\d+)/.exec(claim.output)?.[1]);
      if (!token) return { text: `The claim failed: ${claim.output}` };
      if (!called(mcp('note'))) return { tool: mcp('note'), input: { taskId: 'T-1', text: NOTE, token } };
      if (!called(mcp('renew'))) return { tool: mcp('renew'), input: { taskId: 'T-1', token } };
      if (!called('exec_command')) return { tool: 'exec_command', input: { cmd: 'forkbench board' } };
      return { text: FINAL };
    },
  };
}

/**
 * The pane as the window's terminal shows it: a headless xterm fed with the pane's output, which answers
 * the terminal queries a TUI sends (cursor position, device attributes) as the window's xterm does, and
 * remembers the first screen that matched each watched pattern.
 */
class Screen {
  private readonly term = new Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true });
  private readonly subs: Array<{ dispose(): void }> = [];
  private readonly onUpdate = new Set<() => void>();
  private readonly watched = new Map<RegExp, string | null>();

  constructor(
    private readonly t: RealCliThread,
    private readonly agentId: string,
  ) {
    this.subs.push(
      t.host.onPaneData.event(({ agentId: id, data }) => {
        if (id === agentId) this.term.write(data, () => this.updated());
      }),
      this.term.onData((reply) => t.host.input(agentId, reply)),
    );
  }

  /** The visible screen, one line per row, trailing blanks trimmed. */
  text(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = b.viewportY; i < b.viewportY + ROWS; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n').replace(/\s+$/, '');
  }

  /** Pastes `text` as the window's terminal does: bracketed when the program asked for bracketed paste, so
   *  it arrives as one paste rather than as keys typed faster than a person types. */
  paste(text: string): void {
    this.t.host.input(this.agentId, this.term.modes.bracketedPasteMode ? `\x1b[200~${text}\x1b[201~` : text);
  }

  /** Every line the terminal holds, scrollback included. */
  lines(): string[] {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines;
  }

  /** From now on, remembers the first screen that matches `pattern` (see `seen`). */
  watch(pattern: RegExp): void {
    this.watched.set(pattern, null);
  }

  seen(pattern: RegExp): string | null {
    return this.watched.get(pattern) ?? null;
  }

  /** Resolves once the screen matches; rejects after timeoutMs. */
  waitFor(pattern: RegExp, timeoutMs: number, what: string): Promise<void> {
    return this.until(() => pattern.test(this.text()), timeoutMs, what);
  }

  /** Resolves once `done` holds, checked after every output the terminal takes in; rejects after timeoutMs. */
  until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.onUpdate.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.onUpdate.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.onUpdate.add(check);
      check();
    });
  }

  private updated(): void {
    if (this.watched.size) {
      const text = this.text();
      for (const [pattern, first] of this.watched) if (first === null && pattern.test(text)) this.watched.set(pattern, text);
    }
    for (const check of [...this.onUpdate]) check();
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
    this.onUpdate.clear();
    this.term.dispose();
  }
}

/** Text of Codex's approval dialogs: an MCP tool call ("Allow the forkbench MCP server to run tool
 *  "claim"?" with Allow / Allow for this session / Always allow / Cancel), a command, an edit. */
const APPROVAL_DIALOG = /Allow the .{1,80} to run|Allow for this session|Always allow|Would you like to (run|make|apply)|Yes, proceed|don't ask again/i;

function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The `-c key=value` overrides of a command line, in order. */
function configOverrides(argv: string[]): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    if ((a === '-c' || a === '--config') && argv[i + 1] !== undefined) out.push('-c', argv[i + 1]!);
  });
  return out;
}

/** The command line a process runs (Linux): here, the one the profile gave the pane. */
function argvOf(pid: number): string[] {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
}

describe.skipIf(missing)('Codex CLI, the real CLI through its profile', () => {
  let t: RealCliThread | undefined;
  let api: FakeResponses | undefined;
  let trap: EgressTrap | undefined;
  let screen: Screen | undefined;

  afterEach(async () => {
    screen?.dispose();
    await t?.dispose();
    await api?.close();
    await trap?.close();
    screen = undefined;
    t = undefined;
    api = undefined;
    trap = undefined;
  });

  /**
   * Launches Codex through its profile, waits until it reports the board's MCP server connected, asks for
   * the board work, and follows the scripted model on the board until the final answer is on screen.
   */
  async function boardSession(configExtra = '') {
    api = await startFakeResponses(boardScript());
    trap = await startEgressTrap();
    t = await openRealCliThread('codex', codexEnv(trap));
    const codexHome = seedHome(t.home, fs.realpathSync(t.folder), api.url, configExtra);

    const agent: AgentInfo = await t.host.launch('codex', { cols: COLS, rows: ROWS });
    const s = (screen = new Screen(t, agent.id));
    s.watch(APPROVAL_DIALOG);
    const host = t.host;
    const exited = new Promise<never>((_, reject) => {
      const sub = host.onPaneExit.event((e) => {
        if (e.agentId !== agent.id) return;
        sub.dispose();
        reject(new Error(`codex exited (${JSON.stringify(e.exit)})`));
      });
    });
    exited.catch(() => undefined);
    const diagnose = () => `\n--- requests ---\n${api?.summary()}\n--- egress trap ---\n${trap?.attempts.join('\n')}\n--- screen ---\n${s.text()}`;
    const step = async <T>(p: Promise<T>): Promise<T> => {
      try {
        return await Promise.race([p, exited]);
      } catch (err) {
        throw new Error(`${(err as Error).message}${diagnose()}`);
      }
    };
    // The text as a paste, then Enter once it shows. Typed in one write, the text would reach Codex as keys
    // faster than any typing, which it takes for a paste without brackets, and an Enter that follows too
    // soon becomes part of that paste rather than sending the message.
    const type = async (text: string, what: string) => {
      s.paste(text);
      await step(s.waitFor(new RegExp(`› ${text.slice(0, 40).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`), 10_000, what));
      host.input(agent.id, '\r');
    };

    await step(s.waitFor(/Ask Codex to do anything/, 20_000, 'the Codex composer'));
    // Codex does not wait for an MCP server that is not `required` before the first turn (it gives it a short
    // grace), so a task sent while the board's server still starts reaches the model without the board's
    // tools. So, as a person would, ask /mcp (each answer is the servers' state at that moment) until the
    // board's server shows connected. Its status line in every answer so far:
    const statuses = () =>
      s.lines().flatMap((line) => {
        const m = /^\s*• forkbench: (\S+) \((\d+) tools?\)/.exec(line);
        return m ? [{ state: m[1]!, tools: Number(m[2]) }] : [];
      });
    let status = { state: 'not asked', tools: 0 };
    for (let asked = 0; status.state !== 'connected'; asked++) {
      if (asked === 50) throw new Error(`/mcp never showed the board's server connected; last: ${status.state}${diagnose()}`);
      const before = statuses().length;
      await type('/mcp', 'the /mcp command in the composer');
      await step(s.until(() => statuses().length > before, 20_000, 'the answer to /mcp'));
      status = statuses().at(-1)!;
    }

    await type('Take task T-1 from the board, note that you started, renew it, then show the board.', 'the task in the composer');
    const isMine = (e: BoardEvent) => 'agentId' in e && e.agentId === agent.id && e.taskId === 'T-1';
    const grant = await step(t.event((e) => e.kind === 'grant' && isMine(e), 20_000, 'the claim of T-1'));
    const note = await step(t.event((e) => e.kind === 'note' && e.by === agent.id && e.taskId === 'T-1', 20_000, 'the note on T-1'));
    // A note renews the lease too; the renew tool's own renew comes after that one.
    const byNote = await step(t.event((e) => e.kind === 'renew' && isMine(e) && e.seq > note.seq, 20_000, 'the renew from the note'));
    const renew = await step(t.event((e) => e.kind === 'renew' && isMine(e) && e.seq > byNote.seq, 20_000, 'the renew of T-1'));
    await step(s.waitFor(/the board was shown\./, 20_000, 'the final answer'));

    expect(grant).toMatchObject({ kind: 'grant', taskId: 'T-1', agentId: agent.id });
    expect(note).toMatchObject({ kind: 'note', taskId: 'T-1', by: agent.id, text: NOTE });
    expect(renew).toMatchObject({ kind: 'renew', taskId: 'T-1', agentId: agent.id, via: 'write' });
    if (grant.kind === 'grant' && renew.kind === 'renew') expect(renew.token).toBe(grant.token);
    expect(t.host.board.log().filter((e) => e.kind === 'write-rejected')).toEqual([]);

    // What the CLI sent back for each call, as the model saw it.
    const last = api.turns.at(-1);
    expect(last?.turn, diagnose()).toEqual({ text: FINAL });
    const conversation = last!.conversation;
    const output = (name: string) => conversation.calls.find((c) => c.name === name)?.output ?? '';
    expect(output(mcp('claim'))).toMatch(new RegExp(`"agentId":\\s*"${agent.id}"`));
    for (const tool of ['claim', 'note', 'renew']) expect(output(mcp(tool)), tool).not.toMatch(/refused|error/i);
    // No dialog ever stood between the model's calls and the board.
    expect(s.seen(APPROVAL_DIALOG)).toBeNull();
    return { t, agent, codexHome, conversation, mcpTools: status.tools, shell: output('exec_command') };
  }

  it('claims, notes and renews over MCP with no approval prompt; its sandboxed shell is refused the board', async () => {
    const { t, agent, codexHome, conversation, mcpTools, shell } = await boardSession();
    // One tool per board method.
    expect(mcpTools).toBe(AGENT_METHODS.length);
    // The instructions reached the model, with the warning that its shell cannot reach the board...
    expect(conversation.text).toContain(`You are agent "${agent.id}"`);
    expect(conversation.text).toMatch(/shell.{0,40}cannot reach the board/i);
    // ...and so it is: `forkbench` is found on PATH (no login shell to reset it) and runs with the agent's
    // identity, but Codex's workspace-write sandbox refuses it the board's unix socket.
    expect(shell).not.toMatch(/command not found/);
    expect(shell).toMatch(/forkbench: cannot reach the board at \S+\.sock: EPERM/);

    // `codex mcp list` in the same home with the profile's own overrides lists the board's server.
    const listed = await run(join(BIN, 'codex'), ['mcp', 'list', '--json', ...configOverrides(argvOf(agent.pid!))], {
      cwd: t.folder,
      env: { PATH: `${BIN}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: t.home, CODEX_HOME: codexHome, ...codexEnv(trap!) },
      timeoutMs: 20_000,
    });
    expect(listed.code, listed.stderr).toBe(0);
    const servers = JSON.parse(listed.stdout) as Array<{ name: string; enabled: boolean; transport: { env_vars?: string[] } }>;
    const forkbench = servers.find((server) => server.name === 'forkbench');
    expect(forkbench, listed.stdout).toMatchObject({ enabled: true, transport: { type: 'stdio', command: process.execPath, args: [CLI_SCRIPT, 'mcp'] } });
    // The identity is forwarded from Codex's environment by name, never written into the config.
    expect(forkbench!.transport.env_vars).toEqual(IDENTITY_VARS);
    expect(listed.stdout).not.toContain(t.host.registry.get(agent.id)!.secret);
  }, 60_000);

  it('with network access for its sandbox (a setting of the person), `forkbench board` in its shell lists the board', async () => {
    const { agent, shell } = await boardSession('\n[sandbox_workspace_write]\nnetwork_access = true\n');
    expect(shell).toMatch(/exited with code 0/);
    expect(shell).toMatch(new RegExp(`T-1\\s+claimed\\s+write hello\\.txt\\s+\\[${agent.id}, token \\d+`));
  }, 60_000);
});
