import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildLaunch, type LaunchPlan, type ProfileContext } from '../../../src-main/agents/profiles.js';
import type { ProfileIdShared } from '../../../src-shared/agents/profileIds.js';
import {
  aiderHistory,
  findCodexSession,
  newestSessionId,
  opencodeDb,
  SESSION_SPECS,
  sessionSpecOf,
  type SessionContext,
} from '../../../src-main/agents/sessionSpecs.js';

const dirs: string[] = [];
const freshDir = () => {
  const d = fs.mkdtempSync(join(tmpdir(), 'sessions-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const profileCtx = (agentId: string, stateDir: string): ProfileContext => ({
  threadDir: '/work/repo',
  agentDir: '/run/forkbench/agents/a',
  socketPath: '/run/forkbench/t1.sock',
  agentId,
  agentToken: 'tok-SECRET',
  cliPath: '/opt/forkbench/cli.js',
  nodePath: '/usr/bin/node',
  binDir: '/opt/forkbench/bin',
  baseEnv: { PATH: '/usr/bin', HOME: '/home/ada' },
  stateDir,
});

const sessionCtx = (agentId: string, stateDir: string, env: Record<string, string> = {}, startedAt = Date.now()): SessionContext => ({
  agentId,
  stateDir,
  env,
  cwd: '/work/repo',
  startedAt,
});

function plan(kind: ProfileIdShared, agentId = 'agent-7', stateDir = '/data/agents/agent-7'): LaunchPlan {
  return buildLaunch(kind, profileCtx(agentId, stateDir));
}

describe('session specs', () => {
  it('the agent CLIs have one; a shell and a custom command have no conversation of their own', () => {
    expect(Object.keys(SESSION_SPECS).sort()).toEqual(['aider', 'claude', 'codex', 'gemini', 'opencode']);
    expect(sessionSpecOf('shell')).toBeUndefined();
    expect(sessionSpecOf('custom')).toBeUndefined();
  });

  it.each<ProfileIdShared>(['claude', 'gemini'])('%s starts with a new uuid of ours as --session-id and resumes with --resume <that id>', (kind) => {
    const spec = sessionSpecOf(kind)!;
    const base = plan(kind);
    const ctx = sessionCtx('agent-7', '/data/agents/agent-7');
    const a = spec.start(base, ctx);
    const b = spec.start(base, ctx);
    expect(a.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Every launch its own conversation: two agents in one folder never share an id.
    expect(b.sessionId).not.toBe(a.sessionId);
    expect(a.plan.args).toEqual(['--session-id', a.sessionId, ...base.args]);
    const resumed = spec.resume(base, a.sessionId!, ctx);
    expect(resumed.args).toEqual(['--resume', a.sessionId, ...base.args]);
    // Never "the latest session here".
    expect([...a.plan.args, ...resumed.args]).not.toContain('--continue');
    expect(resumed.args).not.toContain('latest');
    // The profile's own plan is not changed in place.
    expect(base.args).not.toContain('--session-id');
  });

  it("codex resumes as `codex resume <id>` ahead of the profile's overrides", () => {
    const spec = sessionSpecOf('codex')!;
    const base = plan('codex');
    const started = spec.start(base, sessionCtx('agent-7', '/x'));
    expect(started).toEqual({ plan: base, sessionId: null });
    expect(spec.resume(base, '0199a1b2-0000-7000-8000-000000000001', sessionCtx('agent-7', '/x')).args).toEqual(['resume', '0199a1b2-0000-7000-8000-000000000001', ...base.args]);
  });

  it('opencode gets a session database of its own on start and on resume, and resumes with --session <id>', () => {
    const spec = sessionSpecOf('opencode')!;
    const base = plan('opencode');
    const ctx = sessionCtx('agent-7', '/data/agents/agent-7');
    const started = spec.start(base, ctx);
    expect(started.sessionId).toBeNull();
    expect(started.plan.env.OPENCODE_DB).toBe(opencodeDb('/data/agents/agent-7'));
    // The profile's own variables stay.
    expect(started.plan.env.OPENCODE_CONFIG).toBe(base.env.OPENCODE_CONFIG);
    const resumed = spec.resume(base, 'ses_abc123', ctx);
    expect(resumed.args).toEqual(['--session', 'ses_abc123', ...base.args]);
    expect(resumed.env.OPENCODE_DB).toBe(opencodeDb('/data/agents/agent-7'));
  });

  it("aider keeps its chat in the agent's own history file and restores it on resume", () => {
    const spec = sessionSpecOf('aider')!;
    const base = plan('aider');
    const started = spec.start(base, sessionCtx('agent-7', '/data/agents/agent-7'));
    expect(started.sessionId).toBe(aiderHistory('/data/agents/agent-7'));
    expect(started.plan.args).toEqual(['--chat-history-file', started.sessionId, ...base.args]);
    expect(spec.resume(base, started.sessionId!, sessionCtx('agent-7', '/data/agents/agent-7')).args).toEqual([
      '--chat-history-file',
      started.sessionId,
      '--restore-chat-history',
      ...base.args,
    ]);
  });

  it("gemini's home lives in the agent's folder that outlives the host", () => {
    const p = plan('gemini', 'agent-7', '/data/agents/agent-7');
    expect(p.env.GEMINI_CLI_HOME).toBe('/data/agents/agent-7/gemini-home');
  });
});

/** A Codex session file as 0.171 writes it: the meta line first, then the developer instructions. */
function writeRollout(sessions: string, id: string, agentId: string, mtime?: Date): string {
  const day = join(sessions, '2026', '12', '04');
  fs.mkdirSync(day, { recursive: true });
  const path = join(day, `rollout-2026-12-04T21-00-00-${id}.jsonl`);
  const meta = { type: 'session_meta', payload: { id, cwd: '/work/repo' } };
  const dev = { type: 'response_item', payload: { type: 'message', role: 'developer', content: [{ type: 'input_text', text: `You are agent "${agentId}" in Forkbench` }] } };
  fs.writeFileSync(path, `${JSON.stringify(meta)}\n${JSON.stringify(dev)}\n`);
  if (mtime) fs.utimesSync(path, mtime, mtime);
  return path;
}

describe('finding the Codex session an agent wrote', () => {
  const A = '0199a1b2-0000-7000-8000-00000000000a';
  const B = '0199a1b2-0000-7000-8000-00000000000b';

  it('is the file naming this agent, not the newest in the folder', async () => {
    const home = freshDir();
    const sessions = join(home, 'sessions');
    writeRollout(sessions, A, 'codex-1-aaaa');
    // Written later, in the same folder: another agent's.
    writeRollout(sessions, B, 'codex-2-bbbb');
    const env = { CODEX_HOME: home };
    expect(await findCodexSession(sessionCtx('codex-1-aaaa', '/x', env))).toBe(A);
    expect(await findCodexSession(sessionCtx('codex-2-bbbb', '/x', env))).toBe(B);
    // An agent whose id is a prefix of another's is not mistaken for it.
    expect(await findCodexSession(sessionCtx('codex-1-aaa', '/x', env))).toBeNull();
    expect(await findCodexSession(sessionCtx('codex-3-cccc', '/x', env))).toBeNull();
  });

  it('skips files from before the agent started, and reads ~/.codex without CODEX_HOME', async () => {
    const home = freshDir();
    const sessions = join(home, '.codex', 'sessions');
    const started = Date.now();
    writeRollout(sessions, A, 'codex-1-aaaa', new Date(started - 3_600_000));
    expect(await findCodexSession(sessionCtx('codex-1-aaaa', '/x', { HOME: home }, started))).toBeNull();
    writeRollout(sessions, B, 'codex-1-aaaa');
    expect(await findCodexSession(sessionCtx('codex-1-aaaa', '/x', { HOME: home }, started))).toBe(B);
  });

  it('finds nothing, without failing, where Codex has recorded nothing', async () => {
    expect(await findCodexSession(sessionCtx('codex-1-aaaa', '/x', { CODEX_HOME: join(freshDir(), 'none') }))).toBeNull();
    expect(await findCodexSession(sessionCtx('codex-1-aaaa', '/x', {}))).toBeNull();
  });
});

describe("reading OpenCode's session listing", () => {
  it('takes the most recently updated session, and refuses what is not a listing', () => {
    const listing = JSON.stringify([
      { id: 'ses_old', time: { updated: 100 } },
      { id: 'ses_new', time: { updated: 200 } },
    ]);
    expect(newestSessionId(listing)).toBe('ses_new');
    expect(newestSessionId('[]')).toBeNull();
    expect(newestSessionId('not json')).toBeNull();
    expect(newestSessionId('{"id":"ses_x"}')).toBeNull();
    expect(newestSessionId(JSON.stringify([{ id: 'ses x; rm -rf /' }]))).toBeNull();
  });
});
