import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentDirOf,
  boardInstructions,
  buildLaunch,
  forkbenchEnv,
  mergeJson,
  PROFILES,
  resolveLoginShell,
  writeProfileFiles,
  type AgentKind,
  type LaunchPlan,
  type ProfileContext,
} from '../../src-main/agents/profiles.js';
import { AGENT_METHODS } from '../../src-shared/protocol/agentMethods.js';

const TOKEN = 'tok-SECRET-7f3a';
const ctx: ProfileContext = {
  threadDir: '/data/threads/t1',
  socketPath: '/run/forkbench/t1.sock',
  agentId: 'agent-7',
  agentToken: TOKEN,
  cliPath: '/opt/forkbench/dist-main/src-main/cli/main.js',
  nodePath: '/usr/bin/node',
  binDir: '/opt/forkbench/bin',
  baseEnv: { PATH: '/usr/local/bin:/usr/bin', SHELL: '/bin/zsh' },
};
const agentDir = '/data/threads/t1/agents/agent-7';
const identity = {
  FORKBENCH_SOCKET: '/run/forkbench/t1.sock',
  FORKBENCH_AGENT_ID: 'agent-7',
  FORKBENCH_SECRET: TOKEN,
  FORKBENCH_THREAD_DIR: '/data/threads/t1',
};
const fileOf = (plan: LaunchPlan, name: string) => plan.files.find((f) => f.path.endsWith(name));
const kinds = Object.keys(PROFILES) as AgentKind[];
const plans = kinds.map((k) => [k, buildLaunch(k, { ...ctx, allowWorkDirConfig: true, workDir: '/repo' }, { command: 'my-agent', args: ['--x'] })] as const);

describe('every profile', () => {
  it.each(plans)('%s: exports the board identity and puts binDir first on PATH', (_k, plan) => {
    expect(plan.env).toMatchObject(identity);
    // The agent's secret is never called a token: "--token N" in the instructions is the fencing token.
    expect(plan.env).not.toHaveProperty('FORKBENCH_TOKEN');
    expect(plan.env.PATH).toBe('/opt/forkbench/bin:/usr/local/bin:/usr/bin');
    expect(plan.env.FORKBENCH_INSTRUCTIONS).toBe(`${agentDir}/FORKBENCH.md`);
  });

  it.each(plans)('%s: never puts the agent token in argv', (_k, plan) => {
    expect([plan.command, ...plan.args].join('\n')).not.toContain(TOKEN);
  });

  it.each(plans)('%s: writes the instructions file, and only 0600 files hold the token', (_k, plan) => {
    // Shell and custom panes mention the MCP tools too: a hand-started agent can load FORKBENCH_MCP_CONFIG.
    const mentionsMcp = plan.mcp || plan.kind === 'shell' || plan.kind === 'custom';
    expect(fileOf(plan, 'FORKBENCH.md')?.content).toBe(`${boardInstructions(ctx, { mcp: mentionsMcp })}\n`);
    for (const f of plan.files) if (f.content.includes(TOKEN)) expect(f.mode, f.path).toBe(0o600);
  });

  it.each(plans)('%s: keeps generated files in the agent folder (Gemini\'s opt-in settings excepted)', (_k, plan) => {
    for (const f of plan.files) {
      if (f.path === '/repo/.gemini/settings.json') continue;
      expect(f.path.startsWith(`${agentDir}/`), f.path).toBe(true);
    }
  });
});

describe('Claude Code', () => {
  const plan = buildLaunch('claude', ctx);
  it('passes the MCP config file, appends the instructions to the system prompt, pre-approves the board', () => {
    expect(plan.command).toBe('claude');
    expect(plan.args).toEqual([
      '--allowedTools', 'mcp__forkbench,Bash(forkbench:*)',
      '--mcp-config', `${agentDir}/claude-mcp.json`,
      '--append-system-prompt', boardInstructions(ctx, { mcp: true }),
    ]);
    expect(plan.instructionsVia).toBe('system-prompt');
    expect(plan.mcp).toBe(true);
  });

  it('writes a stdio server entry that starts `<node> <cli> mcp` with the identity', () => {
    const f = fileOf(plan, 'claude-mcp.json')!;
    expect(f.mode).toBe(0o600);
    expect(JSON.parse(f.content)).toEqual({
      mcpServers: { forkbench: { type: 'stdio', command: '/usr/bin/node', args: [ctx.cliPath, 'mcp'], env: identity } },
    });
  });
});

describe('Codex CLI', () => {
  const plan = buildLaunch('codex', ctx);
  it('configures the server with -c overrides and forwards the identity by name', () => {
    expect(plan.command).toBe('codex');
    const overrides = plan.args.filter((_, i) => plan.args[i - 1] === '-c');
    expect(plan.args.filter((a) => a === '-c').length).toBe(overrides.length);
    expect(overrides.slice(0, 3)).toEqual([
      'mcp_servers.forkbench.command="/usr/bin/node"',
      `mcp_servers.forkbench.args=["${ctx.cliPath}","mcp"]`,
      'mcp_servers.forkbench.env_vars=["FORKBENCH_SOCKET","FORKBENCH_AGENT_ID","FORKBENCH_SECRET","FORKBENCH_THREAD_DIR"]',
    ]);
    expect(overrides[3]!.startsWith('developer_instructions="You are agent')).toBe(true);
    expect(plan.files.map((f) => f.path)).toEqual([`${agentDir}/FORKBENCH.md`]);
  });

  const python = spawnSync('python3', ['-c', 'import tomllib'], { encoding: 'utf8' }).status === 0;
  it.runIf(python)('every override value is valid TOML that decodes back to the intended value', () => {
    const overrides = plan.args.filter((_, i) => plan.args[i - 1] === '-c');
    const doc = overrides.map((o, i) => `v${i} = ${o.slice(o.indexOf('=') + 1)}`).join('\n');
    const r = spawnSync('python3', ['-c', 'import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'], { input: doc, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const decoded = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(decoded.v0).toBe('/usr/bin/node');
    expect(decoded.v1).toEqual([ctx.cliPath, 'mcp']);
    expect(decoded.v3).toBe(boardInstructions(ctx, { mcp: true }));
  });
});

describe('Gemini CLI', () => {
  it('by default touches nothing outside the agent folder and sends the instructions as the first prompt', () => {
    const plan = buildLaunch('gemini', { ...ctx, workDir: '/repo' });
    expect(plan.command).toBe('gemini');
    expect(plan.args[0]).toBe('--prompt-interactive');
    expect(plan.args[1]).toContain(boardInstructions(ctx, { mcp: false }));
    expect(plan.args).toHaveLength(2);
    expect(plan.mcp).toBe(false);
    expect(plan.instructionsVia).toBe('first-prompt');
    expect(plan.files.map((f) => f.path)).toEqual([`${agentDir}/FORKBENCH.md`]);
  });

  it('when allowed, merges a secret-free mcpServers entry into the project .gemini/settings.json', () => {
    const plan = buildLaunch('gemini', { ...ctx, workDir: '/repo', allowWorkDirConfig: true });
    const f = fileOf(plan, '.gemini/settings.json')!;
    expect(f.path).toBe('/repo/.gemini/settings.json');
    expect(f.merge).toBe('json');
    expect(JSON.parse(f.content)).toEqual({
      mcpServers: {
        forkbench: {
          command: '/usr/bin/node',
          args: [ctx.cliPath, 'mcp'],
          env: { FORKBENCH_SOCKET: '$FORKBENCH_SOCKET', FORKBENCH_AGENT_ID: '$FORKBENCH_AGENT_ID', FORKBENCH_SECRET: '$FORKBENCH_SECRET', FORKBENCH_THREAD_DIR: '$FORKBENCH_THREAD_DIR' },
          trust: true,
        },
      },
    });
    expect(plan.mcp).toBe(true);
    expect(plan.args[1]).toContain('forkbench MCP tools');
  });
});

describe('Aider', () => {
  it('gets the instructions as a read-only file and no MCP', () => {
    const plan = buildLaunch('aider', ctx);
    expect(plan.command).toBe('aider');
    expect(plan.args).toEqual(['--read', `${agentDir}/FORKBENCH.md`]);
    expect(plan.mcp).toBe(false);
    expect(fileOf(plan, 'FORKBENCH.md')!.content).not.toContain('MCP');
  });
});

describe('OpenCode', () => {
  const plan = buildLaunch('opencode', ctx);
  it('points OPENCODE_CONFIG at a per-agent config with a local MCP server and the instructions', () => {
    expect(plan.command).toBe('opencode');
    expect(plan.args).toEqual([]);
    expect(plan.env.OPENCODE_CONFIG).toBe(`${agentDir}/opencode.json`);
    expect(JSON.parse(fileOf(plan, 'opencode.json')!.content)).toEqual({
      $schema: 'https://opencode.ai/config.json',
      mcp: {
        forkbench: {
          type: 'local',
          command: ['/usr/bin/node', ctx.cliPath, 'mcp'],
          enabled: true,
          environment: {
            FORKBENCH_SOCKET: '{env:FORKBENCH_SOCKET}',
            FORKBENCH_AGENT_ID: '{env:FORKBENCH_AGENT_ID}',
            FORKBENCH_SECRET: '{env:FORKBENCH_SECRET}',
            FORKBENCH_THREAD_DIR: '{env:FORKBENCH_THREAD_DIR}',
          },
        },
      },
      instructions: [`${agentDir}/FORKBENCH.md`],
    });
  });
});

describe('login shell and custom command', () => {
  it('runs $SHELL -l, falling back to /bin/bash, then /bin/sh', () => {
    expect(resolveLoginShell({ SHELL: '/bin/zsh' }, (p) => p === '/bin/zsh')).toBe('/bin/zsh');
    expect(resolveLoginShell({ SHELL: '/gone/fish' }, (p) => p === '/bin/bash')).toBe('/bin/bash');
    expect(resolveLoginShell({ SHELL: 'zsh' }, (p) => p === '/bin/bash' || p === 'zsh')).toBe('/bin/bash');
    expect(resolveLoginShell({}, () => false)).toBe('/bin/sh');
    const plan = buildLaunch('shell', { ...ctx, baseEnv: { PATH: '/usr/bin', SHELL: '/bin/sh' } });
    expect(plan.command).toBe('/bin/sh');
    expect(plan.args).toEqual(['-l']);
  });

  it('shell and custom panes get FORKBENCH_MCP_CONFIG for agents started by hand', () => {
    for (const plan of [buildLaunch('shell', ctx), buildLaunch('custom', ctx, { command: 'my-agent', args: ['--fast'] })]) {
      expect(plan.env.FORKBENCH_MCP_CONFIG).toBe(`${agentDir}/mcp.json`);
      expect(JSON.parse(fileOf(plan, 'mcp.json')!.content).mcpServers.forkbench.args).toEqual([ctx.cliPath, 'mcp']);
      expect(plan.instructionsVia).toBe('file');
    }
    const custom = buildLaunch('custom', ctx, { command: 'my-agent', args: ['--fast'] });
    expect([custom.command, ...custom.args]).toEqual(['my-agent', '--fast']);
    expect(() => buildLaunch('custom', ctx)).toThrow(/needs a command/);
    expect(() => buildLaunch('custom', ctx, { command: '  ' })).toThrow(/needs a command/);
  });
});

describe('instructions', () => {
  it('teach the whole CLI, the token, and the lease rules with the configured lease', () => {
    const text = boardInstructions({ ...ctx, leaseMs: 60_000 }, { mcp: true });
    // Spelled as `forkbench --help` spells them (the token is optional on the wire, so it shows in brackets).
    for (const cmd of ['forkbench board', 'forkbench claim [ID]', 'forkbench renew ID [--token N]', 'forkbench note ID TEXT [--token N]',
      'forkbench done ID [--token N] [--note TEXT]', 'forkbench release ID [--token N]', 'forkbench add TITLE [--body TEXT]']) {
      expect(text).toContain(cmd);
    }
    for (const m of AGENT_METHODS) expect(text).toContain(m.summary);
    expect(text).toContain('Every renew, note, edit, fence on the task renews it; reading (board, show) does not.');
    expect(text).toContain('"agent-7"');
    expect(text).toContain('60 s');
    expect(text).toContain('every 15 s');
    expect(text).toMatch(/lapsed lease stays lapsed/);
    expect(boardInstructions(ctx)).toContain('120 s');
  });

  it('the default agent folder is <threadDir>/agents/<agentId>, overridable', () => {
    expect(agentDirOf(ctx)).toBe(agentDir);
    expect(agentDirOf({ ...ctx, agentDir: '/elsewhere' })).toBe('/elsewhere');
    expect(forkbenchEnv({ ...ctx, baseEnv: {} }).PATH).toBe('/opt/forkbench/bin');
  });
});

describe('writeProfileFiles', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'fb-profiles-'));
    dirs.push(d);
    return d;
  };

  it('creates a private agent folder and files with their modes', async () => {
    const root = tmp();
    const plan = buildLaunch('claude', { ...ctx, threadDir: root });
    await writeProfileFiles(plan.files);
    const dir = join(root, 'agents', 'agent-7');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'claude-mcp.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'claude-mcp.json'), 'utf8')).mcpServers.forkbench.env.FORKBENCH_SECRET).toBe(TOKEN);
    expect(readFileSync(join(dir, 'FORKBENCH.md'), 'utf8')).toContain('forkbench claim');
  });

  it('merges into an existing Gemini settings file without losing the user\'s keys', async () => {
    const repo = tmp();
    mkdirSync(join(repo, '.gemini'));
    writeFileSync(join(repo, '.gemini', 'settings.json'), JSON.stringify({ ui: { theme: 'dark' }, mcpServers: { mine: { command: 'x' } } }));
    const plan = buildLaunch('gemini', { ...ctx, threadDir: tmp(), workDir: repo, allowWorkDirConfig: true });
    await writeProfileFiles(plan.files);
    const merged = JSON.parse(readFileSync(join(repo, '.gemini', 'settings.json'), 'utf8'));
    expect(merged.ui).toEqual({ theme: 'dark' });
    expect(Object.keys(merged.mcpServers).sort()).toEqual(['forkbench', 'mine']);
    expect(JSON.stringify(merged)).not.toContain(TOKEN);
  });

  it('refuses to merge into a settings file that is not plain JSON', async () => {
    const repo = tmp();
    mkdirSync(join(repo, '.gemini'));
    writeFileSync(join(repo, '.gemini', 'settings.json'), '{ // a comment\n "a": 1 }');
    const plan = buildLaunch('gemini', { ...ctx, threadDir: tmp(), workDir: repo, allowWorkDirConfig: true });
    await expect(writeProfileFiles(plan.files)).rejects.toThrow(/not plain JSON/);
    expect(readFileSync(join(repo, '.gemini', 'settings.json'), 'utf8')).toContain('a comment');
  });

  it('mergeJson: objects merge, everything else is replaced by ours', () => {
    expect(mergeJson({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2], e: 3 } })).toEqual({ a: { b: 1, c: [2], e: 3 }, d: 1 });
    expect(mergeJson([1], { a: 1 })).toEqual({ a: 1 });
  });
});
