/**
 * The real Claude Code CLI, launched through its real profile in a real pty by a live ThreadHost, talking to
 * a fake Anthropic API on 127.0.0.1 that plays a scripted model: claim T-1 over MCP, note on it and renew it
 * with the claim's token, run `forkbench board` through the CLI's own Bash tool, then answer and stop.
 *
 * What this proves about the profile: the board's MCP server starts and its tools reach the board under the
 * agent's identity, and neither the MCP tools nor `forkbench` in Bash stop at an approval dialog (a waiting
 * dialog would let the lease lapse, and here would keep the renew from ever arriving).
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import headlessModule from '@xterm/headless';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { MCP_SERVER_NAME } from '../../../src-main/agents/profiles.js';
import { AGENT_METHODS } from '../../../src-shared/protocol/agentMethods.js';
import { ensureBuilt } from '../../helpers/cli.js';
import { missingCli, openRealCliThread, type RealCliThread } from './harness.js';
import { startFakeAnthropic, type FakeAnthropic, type Script } from './fakeAnthropic.js';

// CommonJS only: under NodeNext its exports arrive on the default import.
const { Terminal } = headlessModule;

const missing = missingCli('claude');
const BIN = join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin');
const API_KEY = 'sk-ant-api03-forkbench-test-key-0123456789';
const ASK = 'Take task T-1 from the board, note that you started, renew it, then show the board.';
const NOTE = 'Starting on hello.txt (a note from the scripted model).';
const FINAL = 'T-1 is claimed, noted and renewed; the board lists it.';
const COLS = 120;
const ROWS = 40;

/** A board tool's name as Claude Code exposes it. */
const mcp = (tool: string) => `mcp__${MCP_SERVER_NAME}__${tool}`;

/**
 * Claude Code's permission modes that matter here. In 'default' (manual) mode every tool call no rule allows
 * waits for a person, so that is where the profile's --allowedTools must do the work. 'auto' is 2.1.332's
 * own default: a classifier decides, in which the real API takes part and this fake does not.
 */
type PermissionMode = 'default' | 'auto';

/**
 * What Claude Code's pane gets besides what the profile and harness set: the fake API, a key, and the
 * switches that keep it from calling out (this machine reaches nothing but 127.0.0.1, and a test must not).
 */
function claudeEnv(baseUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Not covered by the switch above: at start it would clone Anthropic's plugin marketplace (git and ssh
    // to github.com, a download from claude.ai).
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
  };
}

/**
 * What a person who has used Claude Code before has in its files, found by experiment with 2.1.332:
 * - without `hasCompletedOnboarding` it runs the theme and login screens (and probes api.anthropic.com);
 * - without the folder's `hasTrustDialogAccepted` it asks whether to trust the folder, and quits on No;
 * - without the key's last 20 characters in `customApiKeyResponses.approved` it asks whether to use
 *   ANTHROPIC_API_KEY, with No preselected;
 * - in manual mode, without `hasSeenAutoDefaultNudge` it offers to make auto mode the default, a dialog
 *   that takes the first Enter typed.
 * The permission mode is the person's choice in ~/.claude/settings.json; `projects` maps each folder the
 * test runs Claude Code in to extra per-folder keys.
 */
function seedHome(home: string, mode: PermissionMode, projects: Record<string, object>): void {
  const config = {
    hasCompletedOnboarding: true,
    hasSeenAutoDefaultNudge: true,
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    projects: Object.fromEntries(Object.entries(projects).map(([folder, extra]) => [fs.realpathSync(folder), { hasTrustDialogAccepted: true, ...extra }])),
  };
  fs.writeFileSync(join(home, '.claude.json'), JSON.stringify(config, null, 2), { mode: 0o600 });
  fs.mkdirSync(join(home, '.claude'), { recursive: true });
  fs.writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { defaultMode: mode } }, null, 2));
}

/** The scripted model: each step follows from the tool results the CLI has sent back so far. */
const boardScript: Script = {
  // The agent's conversation carries the board instructions the profile appends to the system prompt.
  isAgent: (body) => JSON.stringify(body.system ?? '').includes('Forkbench') && (body.tools ?? []).some((t) => t.name === 'Bash'),
  next(c) {
    const called = (name: string) => c.calls.find((call) => call.name === name);
    const claim = called(mcp('claim'));
    if (!claim) {
      // Claude Code defers MCP tools: the names are listed to the model, the schemas fetched with ToolSearch.
      const offered = c.body.tools?.find((t) => t.name === mcp('claim'));
      if ((!offered || offered.defer_loading) && !called('ToolSearch') && c.tools.includes('ToolSearch')) {
        return { tool: 'ToolSearch', input: { query: `select:${['claim', 'note', 'renew'].map(mcp).join(',')}` } };
      }
      return { tool: mcp('claim'), input: { taskId: 'T-1' } };
    }
    const token = Number(/"token":\s*(\d+)/.exec(claim.result)?.[1]);
    if (claim.isError || !token) return { text: `The claim failed: ${claim.result}` };
    if (!called(mcp('note'))) return { tool: mcp('note'), input: { taskId: 'T-1', text: NOTE, token } };
    if (!called(mcp('renew'))) return { tool: mcp('renew'), input: { taskId: 'T-1', token } };
    if (!called('Bash')) return { tool: 'Bash', input: { command: 'forkbench board', description: 'Show the task board' } };
    return { text: FINAL };
  },
};

/** Whitespace removed: the TUI wraps and pads lines as the pane's width makes it. */
const squeeze = (s: string) => s.replace(/\s+/g, '');

/** Phrases of Claude Code's approval dialogs (as 2.1.332 words them); none may show in a run. */
const APPROVAL_DIALOG = ['Do you want to proceed?', "don't ask again", 'always allow', 'Do you want to use this API key?', 'Is this a project you created or one you trust?'];

/**
 * The pane as a terminal shows it: a headless xterm fed with the pane's output. Claude Code redraws in
 * place (a status mark written over a spinner, spaces as cursor moves), so only the screen reads right.
 */
class PaneScreen {
  private readonly term = new Terminal({ cols: COLS, rows: ROWS, scrollback: 5_000, allowProposedApi: true });
  private readonly changed = new Set<() => void>();
  private readonly sub: { dispose(): void };

  constructor(
    private readonly t: RealCliThread,
    private readonly agentId: string,
  ) {
    const feed = (data: string) => this.term.write(data, () => this.changed.forEach((f) => f()));
    // Everything so far, then every chunk to come: both happen in this same tick, so nothing is missed.
    feed(t.output(agentId));
    this.sub = t.host.onPaneData.event((e) => {
      if (e.agentId === agentId) feed(e.data);
    });
  }

  /** Scrollback and screen, one line per row. */
  text(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n');
  }

  /** Resolves once the screen satisfies `ok`; rejects after timeoutMs with the screen in the message. */
  until(ok: (screen: string) => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ok(this.text())) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n--- screen ---\n${this.text().trimEnd()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.changed.delete(check);
      };
      this.changed.add(check);
      check();
    });
  }

  /** Resolves once the screen shows `text`, however it is wrapped. */
  shows(text: string, timeoutMs: number, what: string): Promise<void> {
    return this.until((s) => squeeze(s).includes(squeeze(text)), timeoutMs, what);
  }

  /** The prompt box is up and takes typing: its line starts with the prompt mark. */
  ready(): Promise<void> {
    return this.until((s) => /^❯/m.test(s), 30_000, 'the Claude Code prompt');
  }

  /**
   * Types a line as a person does: the text, then Enter once the prompt shows it. Claude Code takes a chunk
   * of many characters as a paste, in which a carriage return is a newline in the prompt rather than "send".
   */
  async type(line: string): Promise<void> {
    this.t.host.input(this.agentId, line);
    await this.shows(line, 10_000, `"${line}" in the prompt`);
    this.t.host.input(this.agentId, '\r');
  }

  /** Every approval-dialog phrase the pane ever printed or shows now. */
  approvalDialogs(): string[] {
    const printed = squeeze(this.t.output(this.agentId));
    const shown = squeeze(this.text());
    return APPROVAL_DIALOG.filter((p) => printed.includes(squeeze(p)) || shown.includes(squeeze(p)));
  }

  dispose(): void {
    this.sub.dispose();
    this.term.dispose();
  }
}

function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

describe.skipIf(missing)('Claude Code, the real CLI through its profile', () => {
  let t: RealCliThread | undefined;
  let api: FakeAnthropic | undefined;
  let screen: PaneScreen | undefined;

  // The harness builds the `forkbench` CLI when its sources changed; a build (half a minute on a busy machine)
  // belongs to no test's time.
  beforeAll(() => ensureBuilt(), 180_000);

  afterEach(async () => {
    screen?.dispose();
    await t?.dispose();
    await api?.close();
    screen = undefined;
    t = undefined;
    api = undefined;
  });

  it.each<PermissionMode>(['default', 'auto'])(
    'in %s permission mode: claims, notes and renews over MCP and lists the board with Bash, with no approval prompt',
    async (mode) => {
      api = await startFakeAnthropic(boardScript);
      t = await openRealCliThread('claude', claudeEnv(api.url));
      seedHome(t.home, mode, { [t.folder]: {} });
      const agent = await t.host.launch('claude', { cols: COLS, rows: ROWS });
      screen = new PaneScreen(t, agent.id);
      const requests = () => `\n--- requests to the fake API ---\n${api?.summary()}\n--- screen ---\n${screen?.text().trimEnd()}`;
      const step = <T>(p: Promise<T>): Promise<T> =>
        p.catch((err: Error) => {
          throw new Error(`${err.message}${requests()}`);
        });

      await step(screen.ready());
      await step(screen.type(ASK));

      const mine = (e: BoardEvent) => 'agentId' in e && e.agentId === agent.id && e.taskId === 'T-1';
      const grant = await step(t.event((e) => e.kind === 'grant' && mine(e), 30_000, 'the claim of T-1'));
      const note = await step(t.event((e) => e.kind === 'note' && e.by === agent.id && e.taskId === 'T-1', 15_000, 'the note on T-1'));
      // A note renews the lease as well; the renew tool's own renew is the one after that.
      const byNote = await step(t.event((e) => e.kind === 'renew' && mine(e) && e.seq > note.seq, 15_000, 'the renew that comes with the note'));
      const renew = await step(t.event((e) => e.kind === 'renew' && mine(e) && e.seq > byNote.seq, 15_000, 'the renew of T-1'));
      await step(screen.shows(FINAL, 15_000, 'the final answer'));

      expect(grant).toMatchObject({ kind: 'grant', taskId: 'T-1', agentId: agent.id, by: agent.id });
      expect(note).toMatchObject({ kind: 'note', taskId: 'T-1', by: agent.id, text: NOTE });
      expect(renew).toMatchObject({ kind: 'renew', taskId: 'T-1', agentId: agent.id, via: 'write', token: (grant as { token: number }).token });
      expect(t.host.board.log().filter((e) => e.kind === 'write-rejected')).toEqual([]);

      // What the CLI sent back for each call, as the model saw it in the last request.
      const last = api.turns.at(-1);
      expect(last?.turn, requests()).toEqual({ text: FINAL });
      const result = (name: string) => last!.conversation.calls.find((c) => c.name === name);
      for (const tool of ['claim', 'note', 'renew']) expect(result(mcp(tool))?.isError, `${tool}: ${result(mcp(tool))?.result}`).toBe(false);
      const bash = result('Bash');
      expect(bash?.isError, bash?.result).toBe(false);
      expect(bash?.result).toMatch(/^T-1\s+claimed\s+write hello\.txt\b/m);
      expect(bash?.result).toContain(agent.id);

      expect(screen.approvalDialogs()).toEqual([]);
    },
    60_000,
  );

  it("Claude Code's own MCP listings show the profile's forkbench server connected", async () => {
    api = await startFakeAnthropic(boardScript);
    t = await openRealCliThread('claude', claudeEnv(api.url));
    // `claude mcp list` takes no --mcp-config: it lists the user's, the local and the project's (.mcp.json)
    // servers. So it runs in a folder of the test's own (never the repo) holding a copy of the file the profile
    // generated as its .mcp.json, a folder the seeded home trusts and whose project servers it has approved.
    const listing = join(dirname(t.folder), 'mcp-list');
    fs.mkdirSync(listing);
    seedHome(t.home, 'default', { [t.folder]: {}, [listing]: { enabledMcpjsonServers: [MCP_SERVER_NAME] } });
    const agent = await t.host.launch('claude', { cols: COLS, rows: ROWS });
    screen = new PaneScreen(t, agent.id);
    await screen.ready();

    // The running session's own view (`/mcp`) of the servers it got through the profile's --mcp-config.
    await screen.type('/mcp');
    await screen.until((s) => new RegExp(`✔ ${MCP_SERVER_NAME}\\s+\\d+ tools`).test(s), 20_000, 'the board server connected in /mcp');
    expect(screen.text()).toMatch(new RegExp(`✔ ${MCP_SERVER_NAME}\\s+${AGENT_METHODS.length} tools`));

    // The same file, checked by `claude mcp list`. The profile writes it to the agent's folder, which the
    // harness keeps under the test's temporary folder.
    const temp = dirname(t.folder);
    const configs = fs.readdirSync(temp, { recursive: true, encoding: 'utf8' }).filter((f) => basename(f) === 'claude-mcp.json');
    expect(configs).toHaveLength(1);
    fs.copyFileSync(join(temp, configs[0]!), join(listing, '.mcp.json'));
    const env = {
      PATH: `${BIN}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: t.home,
      LANG: 'C.UTF-8',
      XDG_CONFIG_HOME: join(t.home, '.config'),
      XDG_DATA_HOME: join(t.home, '.local', 'share'),
      XDG_CACHE_HOME: join(t.home, '.cache'),
      XDG_STATE_HOME: join(t.home, '.local', 'state'),
      ...claudeEnv(api.url),
    };
    const list = await run(join(BIN, 'claude'), ['mcp', 'list'], { cwd: listing, env, timeoutMs: 30_000 });
    expect(list.code, list.out).toBe(0);
    expect(list.out).toMatch(new RegExp(`^${MCP_SERVER_NAME}: .* mcp - ✔ Connected$`, 'm'));
  }, 60_000);
});
