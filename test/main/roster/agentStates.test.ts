/**
 * Agent states end to end in a live host: real ptys, the real `forkbench` CLI over the agents' socket, the
 * host's mirror. `forkbench status` from a hook, the refusals (wrong secret, exited agent, unknown state,
 * a flood), terminal signals (OSC 9 and 777, the bell, titles, Codex's OSC 7501), the per-profile screen
 * matcher and the person's Enter, each change one `agent-state` event with its source, and `forkbench board`
 * listing every agent's state.
 */
import { execFile } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { RpcClient, RpcFailure } from '../../../src-main/cli/rpcClient.js';
import type { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { AgentStates } from '../../../src-main/roster/agentStates.js';
import type { ProfileIdShared } from '../../../src-shared/agents/profileIds.js';
import { PtySession } from '../../../src-main/pty/ptySession.js';
import { CLI, ensureBuilt } from '../../helpers/cli.js';
import { nextEvent, paneText } from '../../helpers/events.js';
import { hostFixture } from '../../helpers/hosts.js';
import { secretsFromTheTestProcess } from '../../helpers/peerJudges.js';

// Its tests report an agent's state with the agent's secret from the test process (CLI, RPC), outside any pane.

const fixture = hostFixture('states', { peerJudge: secretsFromTheTestProcess });
beforeAll(() => ensureBuilt());
afterEach(() => fixture.cleanup());

type Run = { code: number; stdout: string; stderr: string };
function cli(host: ThreadHost, secret: string | undefined, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: secret } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
    else child.stdin?.end();
  });
}
const secretOf = (host: ThreadHost, id: string) => host.roster.agent(id)?.secret;
const stateEvents = async (host: ThreadHost, id: string) =>
  (await host.board.log()).filter((e): e is Extract<BoardEvent, { kind: 'agent-state' }> => e.kind === 'agent-state' && e.agentId === id);
const stateEvent = (host: ThreadHost, id: string, state: string, timeoutMs = 5000) =>
  nextEvent(host, (e) => e.kind === 'agent-state' && e.agentId === id && e.state === state, timeoutMs, `${id} ${state}`) as Promise<Extract<BoardEvent, { kind: 'agent-state' }>>;

/**
 * A stand-in program (a shell script in a real pty) read as `profile` reads its pane, with its states
 * journaled as the agent "stand-in": for the profiles whose CLI a test cannot run here.
 */
async function withStandIn(host: ThreadHost, profile: ProfileIdShared, script: string, body: (session: PtySession) => Promise<void>): Promise<void> {
  const session = PtySession.spawn('/bin/sh', ['-c', script], { cwd: host.folder, env: { PATH: process.env.PATH, LANG: 'C.UTF-8' }, cols: 80, rows: 24 });
  const states = new AgentStates({ board: host.board });
  try {
    states.track('stand-in', `${profile} 1`, profile, session);
    await body(session);
  } finally {
    states.stop();
    await session.kill();
    session.dispose();
  }
}

describe('forkbench status', () => {
  it('a hook reports needs-input, working and idle: one journaled event each, with its source, and the board lists it', async () => {
    const host = await fixture.open();
    const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const waiting = stateEvent(host, a.id, 'needs-input');
    const r = await cli(host, secretOf(host, a.id), ['status', 'needs-input', '--text', 'Allow \x1b]0;pwned\x07 rm?', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).result).toMatchObject({ state: 'needs-input', source: 'hook', text: 'Allow \\x1b]0;pwned\\x07 rm?' });
    expect(await waiting).toMatchObject({ source: 'hook', text: 'Allow \\x1b]0;pwned\\x07 rm?' });
    expect(host.roster.agents().find((x) => x.id === a.id)?.state).toMatchObject({ state: 'needs-input', source: 'hook' });
    // The same report again is no change: nothing more in the journal.
    await cli(host, secretOf(host, a.id), ['status', 'needs-input', '--text', 'Allow \x1b]0;pwned\x07 rm?']);
    expect((await stateEvents(host, a.id)).length).toBe(1);
    const board = await cli(host, secretOf(host, a.id), ['board']);
    expect(board.stdout).toContain(`${a.name} (${a.id})  waiting for you (from its hook): Allow \\x1b]0;pwned\\x07 rm?`);
    expect(board.stdout).not.toContain('\x1b');
    const json = JSON.parse((await cli(host, secretOf(host, a.id), ['board', '--json'])).stdout);
    expect(json.result.agents).toEqual([expect.objectContaining({ id: a.id, name: a.name, state: 'needs-input', source: 'hook' })]);
    // A state's journal line is written after the call is answered (agentStates.ts: a board that cannot write
    // loses only the line), so the list is read once the last one is on the board.
    const idle = stateEvent(host, a.id, 'idle');
    expect((await cli(host, secretOf(host, a.id), ['status', 'working'])).code).toBe(0);
    expect((await cli(host, secretOf(host, a.id), ['status', 'idle'])).code).toBe(0);
    await idle;
    expect((await stateEvents(host, a.id)).map((e) => `${e.state}/${e.source}`)).toEqual(['needs-input/hook', 'working/hook', 'idle/hook']);
  });

  it("MCP's board tool shows each agent's state, as `forkbench board --json` does", async () => {
    const host = await fixture.open();
    const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const b = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const waiting = stateEvent(host, a.id, 'needs-input');
    await cli(host, secretOf(host, a.id), ['status', 'needs-input', '--text', 'Allow \x1b[2J rm?']);
    await waiting;
    const idle = stateEvent(host, b.id, 'idle');
    await cli(host, secretOf(host, b.id), ['status', 'idle']);
    await idle;
    // B asks through `forkbench mcp`, as an MCP-speaking agent would, with the SDK's own client.
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: { PATH: process.env.PATH ?? '', FORKBENCH_SOCKET: host.socket.path, FORKBENCH_SECRET: secretOf(host, b.id)! } }));
    try {
      const answer = await client.callTool({ name: 'board', arguments: {} });
      expect(answer.isError).toBeFalsy();
      const text = (answer.content as Array<{ text: string }>)[0]!.text;
      expect(text).not.toContain('\x1b');
      const agents = (JSON.parse(text) as { agents: Array<{ id: string; state: string; source: string; text: string | null }> }).agents;
      expect(agents).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: a.id, name: a.name, state: 'needs-input', source: 'hook', text: 'Allow \\x1b[2J rm?' }),
          expect.objectContaining({ id: b.id, name: b.name, state: 'idle', source: 'hook' }),
        ]),
      );
      expect(agents).toHaveLength(2);
      // The same as the CLI's answer.
      const json = JSON.parse((await cli(host, secretOf(host, b.id), ['board', '--json'])).stdout);
      expect(agents).toEqual(json.result.agents);
    } finally {
      await client.close();
    }
  });

  it('refuses a wrong secret, an unknown state and an exited agent with a typed reason, and changes nothing', async () => {
    const host = await fixture.open();
    const a = await host.roster.launch('custom', { command: 'read line; exit 0' });
    const wrong = await cli(host, 'not-the-secret', ['status', 'needs-input', '--json']);
    expect(wrong.code).toBe(3);
    expect(JSON.parse(wrong.stdout).error.message).toMatch(/unknown or expired agent secret/);
    const unknown = await cli(host, secretOf(host, a.id), ['status', 'sleeping', '--json']);
    expect(unknown.code).toBe(3);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({ reason: 'invalid-input' });
    expect(JSON.parse(unknown.stdout).error.message).toMatch(/working, needs-input, idle/);
    // stalled and exited are the host's findings, not the agent's to claim
    expect((await cli(host, secretOf(host, a.id), ['status', 'exited'])).code).toBe(3);
    expect((await stateEvents(host, a.id))).toEqual([]);
    const secret = secretOf(host, a.id);
    const exited = stateEvent(host, a.id, 'exited');
    host.roster.relay.input(a.id, 'bye\r');
    expect(await exited).toMatchObject({ source: 'liveness' });
    const late = await cli(host, secret, ['status', 'working', '--json']);
    expect(late.code).toBe(3);
    expect(JSON.parse(late.stdout).error.message).toMatch(/unknown or expired agent secret/);
    expect((await stateEvents(host, a.id)).map((e) => e.state)).toEqual(['exited']);
  });

  it('a flood of status calls is rate-limited per agent, and the board answers other agents meanwhile', async () => {
    const host = await fixture.open();
    const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const b = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const flood = await RpcClient.reach(host.socket.path, secretOf(host, a.id) as string);
    const other = await RpcClient.reach(host.socket.path, secretOf(host, b.id) as string);
    try {
      const calls = Array.from({ length: 400 }, (_, i) => flood.call('status', { state: i % 2 ? 'working' : 'idle' }).then(() => 'ok', (e: RpcFailure) => (e.error.data as { reason: string }).reason));
      const t0 = performance.now();
      await other.call('board');
      const boardMs = performance.now() - t0;
      const outcomes = await Promise.all(calls);
      expect(outcomes.filter((o) => o === 'rate-limited').length).toBeGreaterThan(300);
      expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThan(0);
      expect(new Set(outcomes)).toEqual(new Set(['ok', 'rate-limited']));
      // Another agent's board call is not queued behind the flood (its own connection, no board write).
      expect(boardMs).toBeLessThan(1000);
      // Only changes reached the journal, and no more of them than calls were let through (a write queued
      // after theirs is on disk once they are).
      await host.board.run(() => ({ ok: true as const, value: null }));
      // (a call let through may repeat the state a refused one would have changed: no event for it)
      const changes = (await stateEvents(host, a.id)).length;
      expect(changes).toBeGreaterThan(0);
      expect(changes).toBeLessThanOrEqual(outcomes.filter((o) => o === 'ok').length);
      expect((await other.call('status', { state: 'idle' })).state).toBe('idle');
    } finally {
      flood.close();
      other.close();
    }
  });

  it('--hook reads the event on stdin, prints nothing, exits 0 even when refused, and drops Claude\'s idle_prompt', async () => {
    const host = await fixture.open();
    const a = await host.roster.launch('custom', { command: 'exec sleep 600' });
    const waiting = stateEvent(host, a.id, 'needs-input');
    const event = JSON.stringify({ hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'rm -rf build' } });
    const r = await cli(host, secretOf(host, a.id), ['status', 'needs-input', '--hook'], event);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(await waiting).toMatchObject({ source: 'hook', text: 'Bash: rm -rf build' });
    const idle = JSON.stringify({ hook_event_name: 'Notification', notification_type: 'idle_prompt', message: 'Claude is waiting for your input' });
    expect(await cli(host, secretOf(host, a.id), ['status', 'needs-input', '--hook'], idle)).toMatchObject({ code: 0, stdout: '' });
    const message = JSON.stringify({ hook_event_name: 'Notification', notification_type: 'elicitation_dialog', message: 'Pick a database' });
    const asked = stateEvent(host, a.id, 'needs-input');
    await cli(host, secretOf(host, a.id), ['status', 'working', '--hook'], '{}');
    await cli(host, secretOf(host, a.id), ['status', 'needs-input', '--hook'], message);
    expect(await asked).toMatchObject({ text: 'Pick a database' });
    expect((await stateEvents(host, a.id)).map((e) => e.text)).toEqual(['Bash: rm -rf build', null, 'Pick a database']);
    // A hook must never disturb its CLI: a refusal still exits 0 with nothing on stdout.
    expect(await cli(host, 'wrong', ['status', 'idle', '--hook'], '{}')).toMatchObject({ code: 0, stdout: '' });
  });
});

describe('terminal and screen signals', () => {
  it('an OSC 9 notification is needs-input from the terminal, and Enter in the pane is the answer', async () => {
    const host = await fixture.open();
    const waiting = nextEvent(host, (e) => e.kind === 'agent-state' && e.state === 'needs-input');
    const a = await host.roster.launch('custom', { command: `printf '\\033]9;Approve the migration?\\007'; read answer; echo "got $answer"; exec sleep 600` });
    expect(await waiting).toMatchObject({ agentId: a.id, source: 'terminal', text: 'Approve the migration?' });
    const working = stateEvent(host, a.id, 'working');
    host.roster.relay.input(a.id, 'yes\r');
    expect(await working).toMatchObject({ source: 'terminal' });
  });

  it('OSC 9;4 progress is not a notification', async () => {
    const host = await fixture.open();
    const a = await host.roster.launch('custom', { command: `printf '\\033]9;4;1;50\\007'; echo progress-sent; exec sleep 600` });
    await new Promise<void>((resolve) => host.roster.relay.onData.event(({ data }) => data.includes('progress-sent') && resolve()));
    await host.roster.get(a.id)?.session.flushMirror();
    expect((await stateEvents(host, a.id))).toEqual([]);
  });

  it("a known prompt on a profile's screen is needs-input from the screen, and clears when the prompt goes", async () => {
    const host = await fixture.open();
    // Claude Code's own dialog wording, drawn by a stand-in program in a real pty, read as the claude
    // profile reads its screen (the real CLI's dialogs are in test/agents/realCli/claude.test.ts).
    const session = PtySession.spawn('/bin/sh', ['-c', `printf ' Do you want to proceed?\\n ❯ 1. Yes\\n'; read answer; printf '\\033[2J\\033[Hran it\\n'; exec sleep 600`], { cwd: host.folder, env: { PATH: process.env.PATH }, cols: 80, rows: 24 });
    const states = new AgentStates({ board: host.board });
    try {
      const waiting = stateEvent(host, 'stand-in', 'needs-input');
      states.track('stand-in', 'claude 1', 'claude', session);
      expect(await waiting).toMatchObject({ source: 'screen', text: 'Do you want to proceed?' });
      expect(states.info('stand-in')).toMatchObject({ state: 'needs-input', source: 'screen' });
      const working = stateEvent(host, 'stand-in', 'working');
      const redrawn = new Promise<void>((resolve) => session.onData((d) => d.includes('ran it') && resolve()));
      states.input('stand-in', '1\r');
      session.write('1\r');
      expect(await working).toMatchObject({ source: 'terminal' });
      // Once the screen is redrawn without the prompt, it is not raised again.
      await redrawn;
      await new Promise((r) => setTimeout(r, 200));
      expect((await stateEvents(host, 'stand-in')).map((e) => e.state)).toEqual(['needs-input', 'working']);
    } finally {
      states.stop();
      await session.kill();
      session.dispose();
    }
  });

  it('an OSC 777 notification is needs-input from the terminal, its title and body as the text', async () => {
    const host = await fixture.open();
    const waiting = nextEvent(host, (e) => e.kind === 'agent-state' && e.state === 'needs-input');
    const a = await host.roster.launch('custom', { command: `printf '\\033]777;notify;Deploy;Push to production?\\033\\\\'; exec sleep 600` });
    expect(await waiting).toMatchObject({ agentId: a.id, source: 'terminal', text: 'Deploy: Push to production?' });
  });

  it('the bell is needs-input where the profile says a bell asks (Aider), and nothing in a plain pane', async () => {
    const host = await fixture.open();
    const plain = await host.roster.launch('custom', { command: `printf 'rang\\007\\n'; exec sleep 600` });
    await paneText(host, plain.id, /rang/);
    await host.roster.get(plain.id)?.session.flushMirror();
    expect((await stateEvents(host, plain.id))).toEqual([]);
    await withStandIn(host, 'aider', `printf 'Add file? \\007'; exec sleep 600`, async () => {
      expect(await stateEvent(host, 'stand-in', 'needs-input')).toMatchObject({ source: 'terminal', text: null });
    });
  });

  it("window titles say what the agent does where the profile knows them (Gemini CLI's)", async () => {
    const host = await fixture.open();
    // Gemini CLI 0.61's own titles, in the order a turn with a permission sets them.
    const title = (t: string) => `printf '\\033]0;${t}\\007'; read x;`;
    await withStandIn(host, 'gemini', `${title('✋  Action Required (project)')} ${title('✦  Working… (project)')} ${title('◇  Ready (project)')} exec sleep 600`, async (session) => {
      expect(await stateEvent(host, 'stand-in', 'needs-input')).toMatchObject({ source: 'terminal', text: '✋  Action Required (project)' });
      const working = stateEvent(host, 'stand-in', 'idle');
      session.write('\r');
      session.write('\r');
      expect(await working).toMatchObject({ source: 'terminal' });
      expect((await stateEvents(host, 'stand-in')).map((e) => `${e.state}/${e.source}`)).toEqual(['needs-input/terminal', 'working/terminal', 'idle/terminal']);
    });
  });

  it("Codex's program status (OSC 7501) and its approval notification: blocked is needs-input named by the notification, done is idle, idle at start nothing", async () => {
    const host = await fixture.open();
    // Codex 0.171's sequences, as it sends them for a command that needs approval (see the real-CLI test).
    const status = (s: string) => `printf '\\033]7501;state=${s}:app=codex\\033\\\\';`;
    const approval = `printf '\\033]9;Approval requested: touch x\\007';`;
    const turnDone = `printf '\\033]9;x is there now.\\007';`;
    await withStandIn(host, 'codex', `${status('idle')} read x; ${status('working')} ${approval} ${status('blocked:kind=permission')} read x; ${status('working')} ${turnDone} ${status('done')} read x; ${status('clear')} echo cleared; exec sleep 600`, async (session) => {
      const waiting = stateEvent(host, 'stand-in', 'needs-input');
      session.write('\r');
      expect(await waiting).toMatchObject({ source: 'terminal', text: 'Approval requested: touch x' });
      const done = stateEvent(host, 'stand-in', 'idle');
      session.write('\r');
      expect(await done).toMatchObject({ source: 'terminal' });
      const cleared = new Promise<void>((resolve) => session.onData((d) => d.includes('cleared') && resolve()));
      session.write('\r');
      await cleared;
      await session.flushMirror();
      // One event per change: "idle" at start is no finished turn (nor "working" after it a change from the
      // working every pane starts in), the status that repeats the notification's wait kept its text, the
      // finished turn's notification (the answer) was not read as a question, and "clear" says nothing.
      expect((await stateEvents(host, 'stand-in')).map((e) => `${e.state}/${e.source}/${e.text}`)).toEqual([
        'needs-input/terminal/Approval requested: touch x',
        'working/terminal/null',
        'idle/terminal/null',
      ]);
    });
  });
});
