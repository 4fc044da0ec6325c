import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentStore, STORE_FILE_MODE, type StoredAgent } from '../../../src-main/roster/agentStore.js';
import { AgentSessions } from '../../../src-main/roster/agentSessions.js';
import { AgentRegistry } from '../../../src-main/agents/agentRegistry.js';

const dirs: string[] = [];
const freshDir = () => {
  const d = fs.mkdtempSync(join(tmpdir(), 'agent-store-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const agent = (id: string, o: Partial<StoredAgent> = {}): StoredAgent => ({
  id,
  profile: 'claude',
  name: 'claude 1',
  cwd: '/work/repo',
  sessionId: '5b0c7a8e-3f1d-4c55-9a43-4f6d8c2e1a90',
  state: 'running',
  startedAt: 1_700_000_000_000,
  cols: 120,
  rows: 40,
  ...o,
});

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

describe('AgentStore', () => {
  it('keeps records across opens, in a file only the owner can read', () => {
    const dir = freshDir();
    const path = join(dir, 'thread', 'agents.json');
    const s = AgentStore.open(path);
    expect(s.list()).toEqual([]);
    s.put(agent('claude-1-aa'));
    s.put(agent('codex-2-bb', { profile: 'codex', name: 'codex 1', sessionId: null }));
    s.update('codex-2-bb', { sessionId: '0199a1b2-0000-7000-8000-00000000000b', state: 'exited' });
    expect(modeOf(path)).toBe(STORE_FILE_MODE);
    expect(modeOf(join(dir, 'thread'))).toBe(0o700);
    const again = AgentStore.open(path);
    expect(again.list()).toEqual([agent('claude-1-aa'), agent('codex-2-bb', { profile: 'codex', name: 'codex 1', sessionId: '0199a1b2-0000-7000-8000-00000000000b', state: 'exited' })]);
    again.remove('claude-1-aa');
    expect(AgentStore.open(path).list().map((a) => a.id)).toEqual(['codex-2-bb']);
    // The write is atomic: no temp file is left beside it.
    expect(fs.readdirSync(join(dir, 'thread'))).toEqual(['agents.json']);
  });

  it('an owner-only mode even where the file existed with a wider one', () => {
    const dir = freshDir();
    const path = join(dir, 'agents.json');
    fs.writeFileSync(path, JSON.stringify({ version: 1, agents: [] }), { mode: 0o644 });
    fs.chmodSync(path, 0o644);
    AgentStore.open(path).put(agent('claude-1-aa'));
    expect(modeOf(path)).toBe(STORE_FILE_MODE);
  });

  it.each([
    ['not JSON', '{"version":1,"agents":[', /not JSON/],
    ['a record with a bad field', JSON.stringify({ version: 1, agents: [{ ...agent('x'), profile: 'vim' }] }), /agents\.0\.profile/],
    ['another version', JSON.stringify({ version: 99, agents: [] }), /version/],
    ['empty', '', /not JSON/],
  ])('a damaged file (%s) is set aside with a clear message, and the store starts empty', (_what, text, reason) => {
    const dir = freshDir();
    const path = join(dir, 'agents.json');
    fs.writeFileSync(path, text);
    const warnings: string[] = [];
    const s = AgentStore.open(path, (m) => warnings.push(m), () => 1234);
    expect(s.list()).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`the agent records in ${path} are damaged`);
    expect(warnings[0]).toMatch(reason);
    expect(warnings[0]).toContain(`kept as ${path}.corrupt-1234`);
    // What was there is kept, byte for byte, for a person to look at.
    expect(fs.readFileSync(`${path}.corrupt-1234`, 'utf8')).toBe(text);
    // And the store works again from scratch.
    s.put(agent('claude-1-aa'));
    expect(AgentStore.open(path).list()).toHaveLength(1);
  });

  it('a record that does not fit the schema is refused before it is written', () => {
    const dir = freshDir();
    const path = join(dir, 'agents.json');
    const s = AgentStore.open(path);
    s.put(agent('claude-1-aa'));
    expect(() => s.put({ ...agent('bad'), cols: -1 })).toThrow();
    expect(AgentStore.open(path).list().map((a) => a.id)).toEqual(['claude-1-aa']);
  });
});

describe('AgentSessions', () => {
  it("restores earlier agents as exited tabs whose secrets never authenticate, until revived with a new one", () => {
    const dir = freshDir();
    const first = AgentSessions.open(dir);
    first.plan(agent('claude-1-aa', { sessionId: null }), { kind: 'claude', command: 'claude', args: ['--x'], env: {}, files: [], instructionsVia: 'system-prompt', mcp: true }, {}, null);
    const stored = AgentStore.open(join(dir, 'agents.json')).get('claude-1-aa')!;
    expect(stored.state).toBe('running');
    expect(stored.sessionId).toMatch(/^[0-9a-f-]{36}$/);

    // The host restarts: the record comes back as an exited agent.
    const registry = new AgentRegistry();
    const sessions = AgentSessions.open(dir);
    expect(sessions.restoreInto(registry, 0).map((a) => a.id)).toEqual(['claude-1-aa']);
    const rec = registry.get('claude-1-aa')!;
    expect(rec).toMatchObject({ status: 'exited', name: 'claude 1', profile: 'claude' });
    expect(registry.authenticate(rec.secret)).toBeNull();
    expect(sessions.get('claude-1-aa')!.state).toBe('exited');
    expect(sessions.resumable('claude-1-aa')).toBe(true);

    const restoredSecret = rec.secret;
    const revived = registry.revive('claude-1-aa', 0);
    expect(revived.id).toBe('claude-1-aa');
    expect(revived.secret).not.toBe(restoredSecret);
    revived.started(process.pid);
    expect(registry.authenticate(revived.secret)).toBe(revived);
    expect(registry.authenticate(restoredSecret)).toBeNull();
  });

  it('a record stays running on disk for an agent its pty host kept; the others are written exited', () => {
    const dir = freshDir();
    const first = AgentSessions.open(dir);
    const plan = { kind: 'claude' as const, command: 'claude', args: [], env: {}, files: [], instructionsVia: 'system-prompt' as const, mcp: true };
    first.plan(agent('claude-1-aa', { sessionId: null }), plan, {}, null);
    first.plan(agent('claude-2-bb', { sessionId: null }), plan, {}, null);
    const sessions = AgentSessions.open(dir);
    sessions.restoreInto(new AgentRegistry(), 0, (id) => id === 'claude-1-aa');
    const onDisk = AgentStore.open(join(dir, 'agents.json'));
    expect(onDisk.get('claude-1-aa')!.state).toBe('running');
    expect(onDisk.get('claude-2-bb')!.state).toBe('exited');
  });

  it('a shell is recorded (to be listed after a restart) but has no conversation to resume; an agent with no conversation yet is refused a resume with the reason', async () => {
    const dir = freshDir();
    const s = AgentSessions.open(dir);
    s.plan(agent('shell-1-aa', { profile: 'shell', sessionId: null }), { kind: 'shell', command: '/bin/sh', args: [], env: {}, files: [], instructionsVia: 'file', mcp: false }, {}, null);
    expect(s.get('shell-1-aa')).toMatchObject({ profile: 'shell', state: 'running', sessionId: null });
    expect(s.resumable('shell-1-aa')).toBe(false);
    await expect(s.resumeId('shell-1-aa', {})).rejects.toThrow(/has no conversation of its own to resume: relaunch it instead/);
    await expect(s.resumeId('nobody-1-zz', {})).rejects.toThrow(/no record to resume from/);

    s.plan(agent('codex-1-bb', { profile: 'codex', sessionId: null }), { kind: 'codex', command: 'codex', args: [], env: {}, files: [], instructionsVia: 'developer-instructions', mcp: true }, {}, null);
    await expect(s.resumeId('codex-1-bb', { CODEX_HOME: join(dir, 'no-codex') })).rejects.toThrow(/recorded no conversation to resume/);
  });

  it('keeps how an agent ended and what it held; a later word about the same end keeps what it held; a restart finds the others found gone', () => {
    const dir = freshDir();
    const s = AgentSessions.open(dir);
    const shellPlan = { kind: 'shell' as const, command: '/bin/sh', args: [], env: {}, files: [], instructionsVia: 'file' as const, mcp: false };
    s.plan(agent('shell-1-aa', { profile: 'shell', sessionId: null }), shellPlan, {}, null);
    s.plan(agent('shell-2-bb', { profile: 'shell', sessionId: null }), shellPlan, {}, null);
    s.plan(agent('shell-3-cc', { profile: 'shell', sessionId: null }), shellPlan, {}, null);
    const before = Date.now();
    s.exited('shell-1-aa', {}, { how: 'host-stopped', held: ['T-1', 'T-7'], exit: null });
    const after = Date.now();
    // its death first (what it held, and when), then its exit status (its claims already released): the time
    // kept is the end's, as its first word said it (issue 45)
    s.exited('shell-2-bb', {}, { how: 'exited', held: ['T-2'], exit: null, at: 1_000 });
    s.exited('shell-2-bb', {}, { how: 'exited', held: [], exit: { code: 0, signal: 9 }, at: 2_000 });
    const registry = new AgentRegistry();
    const restored = AgentSessions.open(dir).restoreInto(registry, 0);
    const stopped = restored.find((a) => a.id === 'shell-1-aa')?.ended?.at ?? -1;
    expect(stopped >= before && stopped <= after).toBe(true);
    expect(Object.fromEntries(restored.map((a) => [a.id, a.ended]))).toEqual({
      'shell-1-aa': { how: 'host-stopped', held: ['T-1', 'T-7'], exit: null, at: stopped },
      'shell-2-bb': { how: 'exited', held: ['T-2'], exit: { code: 0, signal: 9 }, at: 1_000 },
      // still running on disk and not kept alive: the host went down with it
      'shell-3-cc': { how: 'found-gone', held: [], exit: null },
    });
    expect(registry.all().map((a) => [a.id, a.status])).toEqual([
      ['shell-1-aa', 'exited'],
      ['shell-2-bb', 'exited'],
      ['shell-3-cc', 'exited'],
    ]);
    // started again (a resume or a relaunch in its place): how it ended before is over
    const again = AgentSessions.open(dir);
    again.plan(again.get('shell-1-aa')!, shellPlan, {}, null);
    expect(again.get('shell-1-aa')).not.toHaveProperty('ended');
  });

  it("forgetting an agent removes its record and its folder", () => {
    const dir = freshDir();
    const s = AgentSessions.open(dir);
    s.plan(agent('claude-1-aa'), { kind: 'claude', command: 'claude', args: [], env: {}, files: [], instructionsVia: 'system-prompt', mcp: true }, {}, null);
    const folder = s.stateDirOf('claude-1-aa');
    expect(modeOf(folder)).toBe(0o700);
    s.forget('claude-1-aa');
    expect(fs.existsSync(folder)).toBe(false);
    expect(AgentSessions.open(dir).get('claude-1-aa')).toBeUndefined();
  });
});
