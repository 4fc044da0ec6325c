import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  boardInstructions,
  buildLaunch,
  forkbenchEnv,
  mergeJson,
  noticeWayOf,
  PROFILES,
  resolveLoginShell,
  writeProfileFiles,
  type LaunchPlan,
  type ProfileContext,
} from '../../../src-main/agents/profiles.js';
import { AGENT_METHODS } from '../../../src-shared/protocol/agentMethods.js';
import type { ProfileIdShared } from '../../../src-shared/agents/profileIds.js';

const TOKEN = 'tok-SECRET-7f3a';
const agentDir = '/data/threads/t1/agents/agent-7';
const ctx: ProfileContext = {
  threadDir: '/work/repo',
  agentDir,
  socketPath: '/run/forkbench/t1.sock',
  agentId: 'agent-7',
  agentToken: TOKEN,
  cliPath: '/opt/forkbench/dist-main/src-main/cli/main.js',
  nodePath: '/usr/bin/node',
  binDir: '/opt/forkbench/bin',
  baseEnv: { PATH: '/usr/local/bin:/usr/bin', SHELL: '/bin/zsh', HOME: '/home/ada' },
};
const identity = {
  FORKBENCH_SOCKET: '/run/forkbench/t1.sock',
  FORKBENCH_AGENT_ID: 'agent-7',
  FORKBENCH_SECRET: TOKEN,
  FORKBENCH_THREAD_DIR: '/work/repo',
};
const lstatExists = (path: string) => lstatSync(path, { throwIfNoEntry: false }) !== undefined;
const fileOf = (plan: LaunchPlan, name: string) => plan.files.find((f) => f.path.endsWith(name));
const kinds = Object.keys(PROFILES) as ProfileIdShared[];
const plans = kinds.map((k) => [k, buildLaunch(k, ctx, { command: 'my-agent', args: ['--x'] })] as const);

describe('every profile', () => {
  it.each(plans)('%s: exports the board identity and puts binDir first on PATH', (_k, plan) => {
    expect(plan.env).toMatchObject(identity);
    // The agent's secret is never called a token: "--token N" in the instructions is the fencing token.
    expect(plan.env).not.toHaveProperty('FORKBENCH_TOKEN');
    // Codex's own folder of helper links comes next (see 'Codex CLI' below), then the user's PATH.
    const own = plan.kind === 'codex' ? [`${agentDir}/bin`] : [];
    expect(plan.env.PATH).toBe(['/opt/forkbench/bin', ...own, '/usr/local/bin:/usr/bin'].join(':'));
    expect(plan.env.FORKBENCH_INSTRUCTIONS).toBe(`${agentDir}/FORKBENCH.md`);
  });

  it.each(plans)('%s: never puts the agent token in argv', (_k, plan) => {
    expect([plan.command, ...plan.args].join('\n')).not.toContain(TOKEN);
  });

  it.each(plans)('%s: writes the instructions file, and only 0600 files hold the token', (_k, plan) => {
    // Shell and custom panes mention the MCP tools too: a hand-started agent can load FORKBENCH_MCP_CONFIG.
    const mentionsMcp = plan.mcp || plan.kind === 'shell' || plan.kind === 'custom';
    // Codex's file says what its developer message says: its sandboxed shell cannot reach the board.
    const sandboxedShell = plan.kind === 'codex';
    expect(fileOf(plan, 'FORKBENCH.md')?.content).toBe(`${boardInstructions(ctx, { mcp: mentionsMcp, sandboxedShell })}\n`);
    for (const f of plan.files) if (f.content.includes(TOKEN)) expect(f.mode, f.path).toBe(0o600);
  });

  it.each(plans)('%s: writes and links only inside the agent folder, never into the project or home', (_k, plan) => {
    for (const f of plan.files) expect(f.path.startsWith(`${agentDir}/`), f.path).toBe(true);
    for (const l of plan.links ?? []) expect(l.into.startsWith(`${agentDir}/`), l.into).toBe(true);
  });
});

describe('Claude Code', () => {
  const plan = buildLaunch('claude', ctx);
  it('passes the MCP config file, appends the instructions to the system prompt, pre-approves the board', () => {
    expect(plan.command).toBe('claude');
    expect(plan.args).toEqual([
      '--allowedTools', 'mcp__forkbench,Bash(forkbench:*)',
      '--mcp-config', `${agentDir}/claude-mcp.json`,
      '--settings', `${agentDir}/claude-settings.json`,
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

describe('agent state hooks', () => {
  const status = (state: string) => `'/usr/bin/node' '${ctx.cliPath}' status ${state} --hook`;
  // Claude Code counts a hook's timeout in seconds, Gemini CLI in milliseconds: 5 s for both.
  const hook = (state: string, timeout = 5) => [{ type: 'command', command: status(state), timeout }];
  it('Claude Code: a settings layer of its own with the state hooks, idle_prompt never hooked', () => {
    const f = fileOf(buildLaunch('claude', ctx), 'claude-settings.json')!;
    expect(f.path).toBe(`${agentDir}/claude-settings.json`);
    expect(f.content).not.toContain(TOKEN);
    expect(JSON.parse(f.content)).toEqual({
      hooks: {
        UserPromptSubmit: [{ hooks: hook('working') }],
        PreToolUse: [{ matcher: '*', hooks: hook('working') }],
        PermissionRequest: [{ matcher: '*', hooks: hook('needs-input') }],
        PostToolUse: [{ matcher: '*', hooks: hook('working') }],
        Notification: [{ matcher: 'permission_prompt|elicitation_dialog', hooks: hook('needs-input') }],
        Stop: [{ hooks: hook('idle') }],
      },
      // Issue 47: the status line reports Claude Code's rate-limit headroom (and runs the person's own).
      statusLine: { type: 'command', command: `'/usr/bin/node' '${ctx.cliPath}' statusline`, padding: 0 },
    });
  });
  it('Gemini CLI: hooks in its own home\'s settings; OpenCode: a plugin in the agent folder', () => {
    const g = JSON.parse(fileOf(buildLaunch('gemini', ctx), '.gemini/settings.json')!.content);
    expect(g.hooks).toEqual({
      BeforeAgent: [{ hooks: hook('working', 5000) }],
      AfterTool: [{ hooks: hook('working', 5000) }],
      Notification: [{ matcher: 'ToolPermission', hooks: hook('needs-input', 5000) }],
      AfterAgent: [{ hooks: hook('idle', 5000) }],
    });
    const o = buildLaunch('opencode', ctx);
    const plugin = fileOf(o, 'forkbench-status.js')!;
    expect(plugin.content).toContain("event.type === 'permission.asked'");
    expect(plugin.content).not.toContain(TOKEN);
    expect(JSON.parse(fileOf(o, 'opencode.json')!.content).plugin).toEqual([`file://${agentDir}/forkbench-status.js`]);
  });
});

describe('Codex CLI', () => {
  const plan = buildLaunch('codex', ctx);
  it('configures the server with -c overrides and forwards the identity by name', () => {
    expect(plan.command).toBe('codex');
    const overrides = plan.args.filter((_, i) => plan.args[i - 1] === '-c');
    expect(plan.args.filter((a) => a === '-c').length).toBe(overrides.length);
    expect(overrides.slice(0, 6)).toEqual([
      'mcp_servers.forkbench.command="/usr/bin/node"',
      `mcp_servers.forkbench.args=["${ctx.cliPath}","mcp"]`,
      'mcp_servers.forkbench.env_vars=["FORKBENCH_SOCKET","FORKBENCH_AGENT_ID","FORKBENCH_SECRET","FORKBENCH_THREAD_DIR"]',
      // The board's write tools run without a person's approval; renewals must not wait on a dialog.
      'mcp_servers.forkbench.default_tools_approval_mode="approve"',
      'mcp_servers.forkbench.required=true',
      // Not a login shell: Debian's /etc/profile would reset PATH and lose `forkbench`.
      'allow_login_shell=false',
    ]);
    expect(overrides[6]!.startsWith('developer_instructions="You are agent')).toBe(true);
    // Its state from the terminal: its notifications as OSC 9 (an approval request's names the command),
    // whether or not the pane is focused (its program status, OSC 7501, needs no setting).
    expect(overrides.slice(7)).toEqual(['tui.notifications=true', 'tui.notification_method="osc9"', 'tui.notification_condition="always"']);
    // and no state hooks: Codex stops at a "Hooks need review" dialog for hooks given this way
    expect(overrides).toHaveLength(10);
    expect(overrides.some((o) => o.startsWith('hooks.'))).toBe(false);
    expect(plan.args.filter((a, i) => a.startsWith('--') && plan.args[i - 1] !== '-c')).toEqual(['--no-daemon']);
    expect(plan.files.map((f) => f.path)).toEqual([`${agentDir}/FORKBENCH.md`]);
  });

  it('links its sandbox helper name, `codex-linux-sandbox`, in the agent\'s folder, on PATH after the board\'s command', () => {
    expect(plan.aliases?.map((a) => a.path)).toEqual([`${agentDir}/bin/codex-linux-sandbox`]);
    expect(plan.env.PATH!.split(':').slice(0, 2)).toEqual(['/opt/forkbench/bin', `${agentDir}/bin`]);
  });

  it('tells agents the Thread’s own renewal rhythm, not a quarter of the lease regardless of the setting', () => {
    expect(boardInstructions(ctx)).toContain('renew at least every 30 s');
    expect(boardInstructions({ ...ctx, leaseMs: 120_000, renewMs: 10_000 })).toContain('renew at least every 10 s');
  });

  it('tells codex to use the MCP tools for the board: its sandboxed shell cannot reach the socket', () => {
    expect(boardInstructions(ctx, { mcp: true, sandboxedShell: true })).toMatch(/sandbox cannot reach the board: use the forkbench MCP tools/);
    expect(boardInstructions(ctx, { mcp: true })).not.toMatch(/sandbox/);
  });

  it('lets the sandbox write the task worktrees, which lie outside the project', () => {
    const roots = ['/data/threads/t1/worktrees'];
    const withRoots = buildLaunch('codex', { ...ctx, writableRoots: roots });
    const overrides = withRoots.args.filter((_, i) => withRoots.args[i - 1] === '-c');
    expect(overrides).toContain(`sandbox_workspace_write.writable_roots=${JSON.stringify(roots)}`);
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
    expect(decoded.v3).toBe('approve');
    expect(decoded.v4).toBe(true);
    expect(decoded.v5).toBe(false);
    expect(decoded.v6).toBe(boardInstructions(ctx, { mcp: true, sandboxedShell: true }));
  });
});

describe('Gemini CLI', () => {
  const plan = buildLaunch('gemini', ctx);
  const home = `${agentDir}/gemini-home`;
  it('trusts the Thread folder, loads the board policy, and sends the instructions as the first prompt', () => {
    expect(plan.command).toBe('gemini');
    expect(plan.args.slice(0, 3)).toEqual(['--policy', `${agentDir}/gemini-policy.toml`, '--prompt-interactive']);
    expect(plan.args[3]).toContain(boardInstructions(ctx, { mcp: true }));
    expect(plan.args).toHaveLength(4);
    expect(plan.env.GEMINI_CLI_TRUST_WORKSPACE).toBe('true');
    expect(plan.instructionsVia).toBe('first-prompt');
    expect(plan.mcp).toBe(true);
  });

  it('gets a home of its own: the user\'s settings with a secret-free board server merged in, their other files linked', () => {
    expect(plan.env.GEMINI_CLI_HOME).toBe(home);
    const f = fileOf(plan, '.gemini/settings.json')!;
    expect(f.path).toBe(`${home}/.gemini/settings.json`);
    expect([f.merge, f.base]).toEqual(['json', '/home/ada/.gemini/settings.json']);
    expect(JSON.parse(f.content)).toEqual({
      mcpServers: {
        forkbench: {
          command: '/usr/bin/node',
          args: [ctx.cliPath, 'mcp'],
          env: { FORKBENCH_SOCKET: '$FORKBENCH_SOCKET', FORKBENCH_AGENT_ID: '$FORKBENCH_AGENT_ID', FORKBENCH_SECRET: '$FORKBENCH_SECRET', FORKBENCH_THREAD_DIR: '$FORKBENCH_THREAD_DIR' },
          trust: true,
        },
      },
      hooks: expect.any(Object),
    });
    expect(plan.links).toEqual([{ from: '/home/ada/.gemini', into: `${home}/.gemini` }]);
    // A user who moved Gemini's home keeps it.
    const moved = buildLaunch('gemini', { ...ctx, baseEnv: { ...ctx.baseEnv, GEMINI_CLI_HOME: '/srv/g' } });
    expect(moved.links).toEqual([{ from: '/srv/g/.gemini', into: `${home}/.gemini` }]);
  });

  it('its policy allows the board command in the shell tool and the board\'s MCP tools, nothing else', () => {
    const policy = fileOf(plan, 'gemini-policy.toml')!.content;
    const rules = policy.split('[[rule]]').slice(1).map((r) => r.trim());
    expect(rules).toEqual([
      'toolName = "run_shell_command"\ncommandPrefix = "forkbench"\ndecision = "allow"\npriority = 100',
      'mcpName = "forkbench"\ntoolName = "*"\ndecision = "allow"\npriority = 100',
    ]);
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
  it('names its analytics log where the host reads what it spent (issue 47)', () => {
    const plan = buildLaunch('aider', { ...ctx, stateDir: '/data/agents/aider-1' });
    expect(plan.env.AIDER_ANALYTICS_LOG).toBe('/data/agents/aider-1/aider-analytics.jsonl');
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
      permission: { 'forkbench_*': 'allow' },
      plugin: [`file://${agentDir}/forkbench-status.js`],
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
    // Every method an agent calls; the hooks' own report of a landed commit is not for agents.
    for (const m of AGENT_METHODS) if (!m.git) expect(text).toContain(m.summary);
    for (const m of AGENT_METHODS) if (m.git) expect(text).not.toContain(m.summary);
    expect(text).toContain('Every renew, note, edit, fence on the task renews it; reading (board, show, why, queue, leases, cost) does not.');
    expect(text).toContain('"agent-7"');
    expect(text).toContain('60 s');
    expect(text).toContain('every 15 s');
    expect(text).toMatch(/lapsed lease stays lapsed/);
    expect(boardInstructions(ctx)).toContain('120 s');
  });

  it('PATH is the board command\'s folder alone when there was none', () => {
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
    const dir = join(tmp(), 'agents', 'agent-7');
    const plan = buildLaunch('claude', { ...ctx, agentDir: dir });
    await writeProfileFiles(plan.files);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'claude-mcp.json')).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(dir, 'claude-mcp.json'), 'utf8')).mcpServers.forkbench.env.FORKBENCH_SECRET).toBe(TOKEN);
    expect(readFileSync(join(dir, 'FORKBENCH.md'), 'utf8')).toContain('forkbench claim');
  });

  /** A user's Gemini home with settings, a login and a memory file. */
  function userGemini(settings: string): string {
    const home = tmp();
    mkdirSync(join(home, '.gemini'));
    writeFileSync(join(home, '.gemini', 'settings.json'), settings);
    writeFileSync(join(home, '.gemini', 'oauth_creds.json'), '{"refresh_token":"r"}');
    writeFileSync(join(home, '.gemini', 'GEMINI.md'), 'be brief');
    return home;
  }

  it('Gemini\'s home: the user\'s settings merged with the board server, their other files linked, theirs untouched', async () => {
    const home = userGemini(JSON.stringify({ ui: { theme: 'dark' }, mcpServers: { mine: { command: 'x' } } }));
    const before = readFileSync(join(home, '.gemini', 'settings.json'), 'utf8');
    const dir = join(tmp(), 'agent-7');
    const plan = buildLaunch('gemini', { ...ctx, agentDir: dir, baseEnv: { ...ctx.baseEnv, HOME: home } });
    await writeProfileFiles(plan.files, plan.links);
    const overlay = join(dir, 'gemini-home', '.gemini');
    const merged = JSON.parse(readFileSync(join(overlay, 'settings.json'), 'utf8'));
    expect(merged.ui).toEqual({ theme: 'dark' });
    expect(Object.keys(merged.mcpServers).sort()).toEqual(['forkbench', 'mine']);
    expect(JSON.stringify(merged)).not.toContain(TOKEN);
    expect(lstatSync(join(overlay, 'settings.json')).isSymbolicLink()).toBe(false);
    expect(readlinkSync(join(overlay, 'oauth_creds.json'))).toBe(join(home, '.gemini', 'oauth_creds.json'));
    expect(readlinkSync(join(overlay, 'GEMINI.md'))).toBe(join(home, '.gemini', 'GEMINI.md'));
    expect(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')).toBe(before);
  });

  it('Gemini without a home folder of the user\'s: the board settings alone', async () => {
    const dir = join(tmp(), 'agent-7');
    const plan = buildLaunch('gemini', { ...ctx, agentDir: dir, baseEnv: { ...ctx.baseEnv, HOME: join(tmp(), 'nobody') } });
    await writeProfileFiles(plan.files, plan.links);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, 'gemini-home', '.gemini', 'settings.json'), 'utf8')))).toEqual(['mcpServers', 'hooks']);
  });

  it('refuses to merge settings that are not plain JSON, and leaves them as they were', async () => {
    const home = userGemini('{ // a comment\n "a": 1 }');
    const plan = buildLaunch('gemini', { ...ctx, agentDir: join(tmp(), 'a'), baseEnv: { ...ctx.baseEnv, HOME: home } });
    await expect(writeProfileFiles(plan.files, plan.links)).rejects.toThrow(/not plain JSON/);
    expect(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8')).toContain('a comment');
  });

  // The helper is Linux's alone (elsewhere Codex sandboxes without it).
  it.runIf(process.platform === 'linux')('Codex\'s sandbox helper: linked to the binary the `codex` on PATH runs, made again on each write, none without a codex', async () => {
    const root = tmp();
    const native = join(root, 'opt', 'codex');
    mkdirSync(join(root, 'opt'));
    writeFileSync(native, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), { mode: 0o755 });
    const bin = join(root, 'bin');
    mkdirSync(bin);
    symlinkSync(native, join(bin, 'codex'));
    const dir = join(root, 'agent-7');
    const helper = join(dir, 'bin', 'codex-linux-sandbox');
    const write = async (PATH: string) => {
      const plan = buildLaunch('codex', { ...ctx, agentDir: dir, baseEnv: { PATH } });
      await writeProfileFiles(plan.files, plan.links, plan.aliases);
    };
    await write(bin);
    expect(readlinkSync(helper)).toBe(native);
    expect(statSync(join(dir, 'bin')).mode & 0o777).toBe(0o700);
    // Written again (a resume): the link is made again, not refused for being there.
    await write(bin);
    expect(readlinkSync(helper)).toBe(native);
    // A resume where codex is gone: no stale link to a binary that is not the pane's.
    await write(join(root, 'empty'));
    expect(lstatExists(helper)).toBe(false);
  });

  it('mergeJson: objects merge, everything else is replaced by ours', () => {
    expect(mergeJson({ a: { b: 1, c: [1] }, d: 1 }, { a: { c: [2], e: 3 } })).toEqual({ a: { b: 1, c: [2], e: 3 }, d: 1 });
    expect(mergeJson([1], { a: 1 })).toEqual({ a: 1 });
  });

  it('how each profile is told things: agent CLIs typed, a shell or any other program shown, never typed', () => {
    expect(Object.fromEntries(Object.keys(PROFILES).map((k) => [k, noticeWayOf(k)]))).toEqual({
      claude: 'typed',
      codex: 'typed',
      gemini: 'typed',
      aider: 'typed',
      opencode: 'typed',
      shell: 'shown',
      custom: 'shown',
    });
    // A pane a pty host kept under a profile this version does not know, or a prototype key.
    expect(noticeWayOf('vim')).toBe('shown');
    expect(noticeWayOf('toString')).toBe('shown');
  });
});
