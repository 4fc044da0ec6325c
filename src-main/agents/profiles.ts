/**
 * Built-in agent profiles: how to start each coding agent CLI in a pane so that it can reach the board.
 *
 * Every agent gets the board two ways:
 * - the `forkbench` CLI on PATH (binDir first) with its identity in the protocol's AgentEnv variables:
 *   FORKBENCH_SOCKET, FORKBENCH_AGENT_ID, FORKBENCH_SECRET (the agent's secret; deliberately not called
 *   "token", which the instructions use for the fencing token a claim returns) and FORKBENCH_THREAD_DIR;
 * - where the CLI speaks MCP, the stdio server `<nodePath> <cliPath> mcp`, handed over the way that CLI
 *   takes it.
 *
 * Rules the profiles follow:
 * - Config goes through args, env, or files in a per-agent folder (in Forkbench's data, mode 0700), never
 *   into the user's repo or home.
 * - The agent token never appears in argv (/proc/<pid>/cmdline is readable by every local user; environ is
 *   not). Configs reference the environment where the CLI can expand it, or sit in 0600 files.
 * - Building a plan is pure; `writeProfileFiles` does the I/O.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { Limits } from '../../src-shared/board/limits.js';
import { AGENT_METHODS, AgentEnv, synopsis } from '../../src-shared/protocol/agentMethods.js';

export type AgentKind = 'claude' | 'codex' | 'gemini' | 'aider' | 'opencode' | 'shell' | 'custom';

export interface ProfileContext {
  /** The Thread's folder: the project the agents work in and their starting directory (exported as
   *  FORKBENCH_THREAD_DIR). */
  threadDir: string;
  /** The board's Unix socket. */
  socketPath: string;
  agentId: string;
  /** The agent's secret for the socket (exported as AgentEnv.secret). Goes into env and 0600 files only. */
  agentToken: string;
  /** Absolute path to the `forkbench` CLI's JavaScript entry. */
  cliPath: string;
  /** Absolute path to the node binary that runs the CLI (Electron's own node may not be on PATH). */
  nodePath: string;
  /** Folder holding the `forkbench` launcher, put first on PATH. */
  binDir: string;
  /** Where this agent's generated files go: a private folder outside the project (they can hold its secret). */
  agentDir: string;
  /** Folders outside threadDir the agent must be able to write (its task worktrees), for CLIs whose
   *  sandbox limits writes to the working directory (Codex). */
  writableRoots?: readonly string[];
  /** Lease length the instructions quote; defaults to the board's default. */
  leaseMs?: number;
  /** The environment PATH and SHELL are read from; defaults to process.env. */
  baseEnv?: Record<string, string | undefined>;
}

export interface ProfileFile {
  path: string;
  content: string;
  mode: number;
  /** 'json': deep-merge into an existing JSON object file instead of replacing it (our keys win). */
  merge?: 'json';
  /** With merge: the JSON file merged into (the user's own settings), instead of the file at `path`. */
  base?: string;
}

/** Every entry of `from` (a folder of the user's) that the plan does not write is symlinked into `into`. */
export interface ProfileLink {
  from: string;
  into: string;
}

export type InstructionsChannel =
  | 'system-prompt' // appended to the CLI's system prompt
  | 'developer-instructions' // a config key that adds a developer message
  | 'config-instructions' // the CLI's config lists the instructions file
  | 'read-only-file' // the CLI loads the file as read-only context
  | 'first-prompt' // no invisible channel exists: the instructions are the session's first message
  | 'file'; // only written to FORKBENCH_INSTRUCTIONS for a person or a custom agent

export interface LaunchPlan {
  kind: AgentKind;
  command: string;
  args: string[];
  /** Variables to add to the pane's environment (PATH is the full new value). */
  env: Record<string, string>;
  files: ProfileFile[];
  /** Folders of the user's whose entries the agent sees through links (Gemini's home overlay). */
  links?: ProfileLink[];
  instructionsVia: InstructionsChannel;
  /** Whether the forkbench MCP server is configured; the CLI works either way. */
  mcp: boolean;
}

export interface CustomCommand {
  command: string;
  args?: readonly string[];
}

export interface AgentProfile {
  kind: AgentKind;
  label: string;
  build(ctx: ProfileContext, custom?: CustomCommand): LaunchPlan;
}

/** The MCP server's name in every config: tools appear as e.g. `mcp__forkbench__claim` in Claude Code. */
export const MCP_SERVER_NAME = 'forkbench';
const INSTRUCTIONS_FILE = 'FORKBENCH.md';
/** Only the owner may read an agent's folder: its files can hold the agent token. */
const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
/** Files without secrets that the user may want to open. */
const SHARED_FILE_MODE = 0o644;

/** The variables that carry an agent's identity, in the names the socket and CLI read. */
const IDENTITY_VARS = [AgentEnv.socket, AgentEnv.agentId, AgentEnv.secret, AgentEnv.threadDir] as const;

/** The board identity every profile exports, plus PATH with binDir first. */
export function forkbenchEnv(ctx: ProfileContext): Record<string, string> {
  const basePath = (ctx.baseEnv ?? process.env).PATH;
  return {
    [AgentEnv.socket]: ctx.socketPath,
    [AgentEnv.agentId]: ctx.agentId,
    [AgentEnv.secret]: ctx.agentToken,
    [AgentEnv.threadDir]: ctx.threadDir,
    FORKBENCH_INSTRUCTIONS: join(ctx.agentDir, INSTRUCTIONS_FILE),
    PATH: basePath ? `${ctx.binDir}${delimiter}${basePath}` : ctx.binDir,
  };
}

/** The identity variables with literal values, for configs that must carry them (0600 files only). */
function identityEnv(ctx: ProfileContext): Record<string, string> {
  const env = forkbenchEnv(ctx);
  return Object.fromEntries(IDENTITY_VARS.map((k) => [k, env[k]!]));
}

/** The identity variables as references the CLI expands from its own environment (`$X`, `{env:X}`). */
function identityRefs(ref: (name: string) => string): Record<string, string> {
  return Object.fromEntries(IDENTITY_VARS.map((k) => [k, ref(k)]));
}


/**
 * What an agent is told about the board. Plain text: it goes into system prompts and files alike. The
 * command list comes from the same method table as the CLI and the MCP tools, so it cannot drift.
 */
export function boardInstructions(ctx: ProfileContext, opts: { mcp: boolean; sandboxedShell?: boolean } = { mcp: false }): string {
  const leaseS = Math.round((ctx.leaseMs ?? Limits.defaultLeaseMs) / 1000);
  // A quarter of the lease, the board's own renew rhythm (kubelet: 10 s renew of a 40 s lease).
  const renewS = Math.max(1, Math.floor(leaseS / 4));
  const via = opts.mcp
    ? `the \`forkbench\` command (on your PATH) or the ${MCP_SERVER_NAME} MCP tools, which do the same things`
    : 'the `forkbench` command (on your PATH)';
  // What git's hooks call (a landed commit's record) is not for agents to call themselves.
  const methods = AGENT_METHODS.filter((m) => !m.git);
  const width = Math.max(...methods.map((m) => synopsis(m).length)) + 2;
  // Writes that keep a claim alive: claim starts one, done and release end it, add is about no claim.
  const notRenewing = new Set(['claim', 'add', 'done', 'release']);
  const writes = methods.filter((m) => m.write && !notRenewing.has(m.name)).map((m) => m.name);
  const reads = methods.filter((m) => !m.write).map((m) => m.name);
  return [
    `You are agent "${ctx.agentId}" in Forkbench: several coding agents work side by side and share one task board.`,
    `Coordinate through the board with ${via}:`,
    '',
    ...methods.map((m) => `  ${synopsis(m).padEnd(width)}${m.summary}`),
    '',
    'Rules:',
    '- Claim a task before working on it, and work only on tasks you hold.',
    '- Pass the token your claim printed as --token on every write about that task: a write carrying an old token is refused.',
    `- A lease lasts ${leaseS} s. Every ${writes.join(', ')} on the task renews it; reading (${reads.join(', ')}) does not.`,
    `  While working, renew at least every ${renewS} s (between steps is fine).`,
    '- A lapsed lease stays lapsed: the task may go to another agent and your late note or done is rejected.',
    '  If that happens, stop work on it, run `forkbench board`, and claim again (you get a new token).',
    '- Finish with `forkbench done`. If you stop or get stuck, `forkbench release` so someone else can take it.',
    '- When a claim names a git worktree, work and commit only there (`cd` into it), on the task branch it names.',
    '  Commits there are checked against your claim: a refused commit means the task is no longer yours, so stop.',
    // Codex's sandbox denies its shell the board's socket (EPERM); its MCP servers run outside the sandbox.
    ...(opts.sandboxedShell && opts.mcp
      ? [`- Your shell's sandbox cannot reach the board: use the ${MCP_SERVER_NAME} MCP tools for every board call, not the \`forkbench\` command.`]
      : []),
  ].join('\n');
}

/** The stdio MCP server, as command + args. */
function mcpCommand(ctx: ProfileContext): { command: string; args: string[] } {
  return { command: ctx.nodePath, args: [ctx.cliPath, 'mcp'] };
}

/** `mcpServers` in the Claude Code / .mcp.json shape, with literal identity values (goes in a 0600 file). */
function standardMcpConfig(ctx: ProfileContext): string {
  const { command, args } = mcpCommand(ctx);
  return json({ mcpServers: { [MCP_SERVER_NAME]: { type: 'stdio', command, args, env: identityEnv(ctx) } } });
}

/** The instructions as the file FORKBENCH_INSTRUCTIONS names: the same text the agent is given otherwise. */
function instructionsFile(ctx: ProfileContext, text: string): ProfileFile {
  return { path: join(ctx.agentDir, INSTRUCTIONS_FILE), content: `${text}\n`, mode: SHARED_FILE_MODE };
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A TOML value for codex's `-c key=value`: JSON strings and arrays of strings are valid TOML. */
function toml(value: string | readonly string[]): string {
  return JSON.stringify(value);
}

/**
 * The login shell: $SHELL when it names an existing absolute path, else /bin/bash, else /bin/sh.
 * `exists` is injectable for tests.
 */
export function resolveLoginShell(env: Record<string, string | undefined> = process.env, exists: (p: string) => boolean = existsSync): string {
  const shell = env.SHELL;
  if (shell && isAbsolute(shell) && exists(shell)) return shell;
  return exists('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

const claude: AgentProfile = {
  kind: 'claude',
  label: 'Claude Code',
  build(ctx) {
    const mcpPath = join(ctx.agentDir, 'claude-mcp.json');
    const instructions = boardInstructions(ctx, { mcp: true });
    return {
      kind: 'claude',
      command: 'claude',
      // Order matters: --allowedTools and --mcp-config are variadic, so each is followed by another flag
      // and a prompt a caller appends after the last (single-valued) flag is still parsed as the prompt.
      args: [
        // The board's tools and the `forkbench` CLI are pre-approved: asking a person before every lease
        // renewal would let leases lapse while the dialog waits.
        '--allowedTools',
        `mcp__${MCP_SERVER_NAME},Bash(forkbench:*)`,
        // Adds our server to the user's own (no --strict-mcp-config: their servers keep working).
        '--mcp-config',
        mcpPath,
        '--append-system-prompt',
        instructions,
      ],
      env: forkbenchEnv(ctx),
      files: [{ path: mcpPath, content: standardMcpConfig(ctx), mode: PRIVATE_FILE_MODE }, instructionsFile(ctx, instructions)],
      instructionsVia: 'system-prompt',
      mcp: true,
    };
  },
};

const codex: AgentProfile = {
  kind: 'codex',
  label: 'Codex CLI',
  build(ctx) {
    const { command, args } = mcpCommand(ctx);
    const key = `mcp_servers.${MCP_SERVER_NAME}`;
    const instructions = boardInstructions(ctx, { mcp: true, sandboxedShell: true });
    return {
      kind: 'codex',
      command: 'codex',
      // Codex has no per-run MCP config file; `-c` overrides layer over ~/.codex/config.toml without
      // touching it. Codex passes MCP servers only a default allow-list of variables, so `env_vars`
      // forwards the identity from codex's own environment: the token never lands in argv.
      args: [
        '-c',
        `${key}.command=${toml(command)}`,
        '-c',
        `${key}.args=${toml(args)}`,
        '-c',
        `${key}.env_vars=${toml(IDENTITY_VARS)}`,
        // Codex asks a person before every write tool of an MCP server (claim, renew, note, done...): a
        // renewal waiting on a dialog lets the lease lapse. The board's tools are the agent's own business.
        '-c',
        `${key}.default_tools_approval_mode=${toml('approve')}`,
        // Codex does not wait for a server it may start without: a slow start left the first turn without
        // the board's tools. An agent in a Forkbench pane without its board would work on unclaimed tasks.
        '-c',
        `${key}.required=true`,
        // Codex runs shell commands as `bash -lc`; a login shell reads /etc/profile, which on Debian resets
        // PATH and loses the `forkbench` command put first on it.
        '-c',
        'allow_login_shell=false',
        // Codex's workspace-write sandbox lets its shell write only the working directory: a task's worktree
        // lives in Forkbench's data folder.
        ...(ctx.writableRoots?.length ? ['-c', `sandbox_workspace_write.writable_roots=${toml(ctx.writableRoots)}`] : []),
        // The agent runs in the pane's own process tree, not in a shared background server: the host's
        // liveness check and its kill on pane close and exit reach only the pane's processes.
        '--no-daemon',
        // `developer_instructions` adds a developer message without replacing codex's base instructions.
        // `-c` accepts unknown keys silently, so an older codex just ignores it; the file stays as fallback.
        '-c',
        `developer_instructions=${toml(instructions)}`,
      ],
      env: forkbenchEnv(ctx),
      files: [instructionsFile(ctx, instructions)],
      instructionsVia: 'developer-instructions',
      mcp: true,
    };
  },
};

/** Gemini CLI's policy rules: the board's command in its shell tool and the board's MCP tools run without a
 *  confirmation per call, as Claude Code's --allowedTools does (a waiting dialog lets leases lapse).
 *  Priorities sit in the user tier, above the default "ask" for shell commands. */
const GEMINI_POLICY = `# Forkbench: the board's command and tools need no confirmation per call.
[[rule]]
toolName = "run_shell_command"
commandPrefix = "forkbench"
decision = "allow"
priority = 100

[[rule]]
mcpName = "${MCP_SERVER_NAME}"
toolName = "*"
decision = "allow"
priority = 100
`;

/** The user's own Gemini folder: $GEMINI_CLI_HOME/.gemini when they set one, else ~/.gemini. */
function userGeminiDir(ctx: ProfileContext): string | undefined {
  const env = ctx.baseEnv ?? process.env;
  const home = env.GEMINI_CLI_HOME ?? env.HOME ?? env.USERPROFILE;
  return home ? join(home, '.gemini') : undefined;
}

const gemini: AgentProfile = {
  kind: 'gemini',
  label: 'Gemini CLI',
  build(ctx) {
    const instructions = boardInstructions(ctx, { mcp: true });
    // Gemini CLI reads MCP servers only from settings files: system paths it accepts only in root-owned
    // folders, and the project's .gemini/ is the user's repo. GEMINI_CLI_HOME moves its home folder, so the
    // agent gets a home of its own whose .gemini/settings.json is the user's own settings with the board's
    // server merged in, and whose other entries (logins, memory, commands, history) link to the user's.
    const home = join(ctx.agentDir, 'gemini-home');
    const userDir = userGeminiDir(ctx);
    const policyPath = join(ctx.agentDir, 'gemini-policy.toml');
    const { command, args } = mcpCommand(ctx);
    return {
      kind: 'gemini',
      command: 'gemini',
      args: [
        '--policy',
        policyPath,
        // No system-prompt flag (GEMINI_SYSTEM_MD would replace the whole prompt), and include-directory
        // GEMINI.md files load only with a setting that lives in the user's files: the instructions ride the
        // first message, which `--prompt-interactive` sends before handing the session to the user.
        '--prompt-interactive',
        `${instructions}\n\nReply with one short line to confirm, then wait for the user's task.`,
      ],
      // An untrusted folder starts with MCP servers off (headless runs exit with 55). The folder is the one
      // the user opened the Thread on, which is their trust decision. The variable, not `--skip-trust` (which
      // only sets it): `gemini mcp list` run from the pane then sees the same trust.
      env: { ...forkbenchEnv(ctx), GEMINI_CLI_HOME: home, GEMINI_CLI_TRUST_WORKSPACE: 'true' },
      files: [
        instructionsFile(ctx, instructions),
        {
          path: join(home, '.gemini', 'settings.json'),
          // $VAR references Gemini expands from its environment: the file holds no secret.
          content: json({ mcpServers: { [MCP_SERVER_NAME]: { command, args, env: identityRefs((k) => `$${k}`), trust: true } } }),
          mode: PRIVATE_FILE_MODE,
          merge: 'json',
          ...(userDir ? { base: join(userDir, 'settings.json') } : {}),
        },
        { path: policyPath, content: GEMINI_POLICY, mode: SHARED_FILE_MODE },
      ],
      links: userDir ? [{ from: userDir, into: join(home, '.gemini') }] : [],
      instructionsVia: 'first-prompt',
      mcp: true,
    };
  },
};

const aider: AgentProfile = {
  kind: 'aider',
  label: 'Aider',
  build(ctx) {
    const instructions = instructionsFile(ctx, boardInstructions(ctx, { mcp: false }));
    return {
      kind: 'aider',
      command: 'aider',
      // Aider speaks no MCP: it gets the instructions as a read-only context file and runs `forkbench`
      // through its shell-command suggestions.
      args: ['--read', instructions.path],
      env: forkbenchEnv(ctx),
      files: [instructions],
      instructionsVia: 'read-only-file',
      mcp: false,
    };
  },
};

const opencode: AgentProfile = {
  kind: 'opencode',
  label: 'OpenCode',
  build(ctx) {
    const configPath = join(ctx.agentDir, 'opencode.json');
    const instructions = instructionsFile(ctx, boardInstructions(ctx, { mcp: true }));
    const { command, args } = mcpCommand(ctx);
    return {
      kind: 'opencode',
      command: 'opencode',
      args: [],
      // OPENCODE_CONFIG layers this file between the user's global and project configs. `{env:X}` is
      // OpenCode's substitution, so the file holds no secret.
      env: { ...forkbenchEnv(ctx), OPENCODE_CONFIG: configPath },
      files: [
        {
          path: configPath,
          content: json({
            $schema: 'https://opencode.ai/config.json',
            mcp: {
              [MCP_SERVER_NAME]: { type: 'local', command: [command, ...args], enabled: true, environment: identityRefs((k) => `{env:${k}}`) },
            },
            instructions: [instructions.path],
            // The board's tools never wait on a dialog, whatever the user's own rules ask (a renewal stuck
            // behind one lets the lease lapse); as Claude Code's --allowedTools. Their bash rule stays theirs.
            permission: { [`${MCP_SERVER_NAME}_*`]: 'allow' },
          }),
          mode: SHARED_FILE_MODE,
        },
        instructions,
      ],
      instructionsVia: 'config-instructions',
      mcp: true,
    };
  },
};

/** For panes a person drives (a shell, or an agent we have no profile for): the instructions and a standard
 *  MCP config sit in the agent folder, named by FORKBENCH_INSTRUCTIONS and FORKBENCH_MCP_CONFIG, so e.g.
 *  `claude --mcp-config "$FORKBENCH_MCP_CONFIG"` works from the shell. */
function manualPlan(ctx: ProfileContext, kind: 'shell' | 'custom', command: string, args: string[]): LaunchPlan {
  const mcpPath = join(ctx.agentDir, 'mcp.json');
  return {
    kind,
    command,
    args,
    env: { ...forkbenchEnv(ctx), FORKBENCH_MCP_CONFIG: mcpPath },
    files: [{ path: mcpPath, content: standardMcpConfig(ctx), mode: PRIVATE_FILE_MODE }, instructionsFile(ctx, boardInstructions(ctx, { mcp: true }))],
    instructionsVia: 'file',
    mcp: false,
  };
}

/**
 * A login shell whose start-up files run as usual and which still finds `forkbench` afterwards. Login
 * start-up files reset PATH (Debian's /etc/profile does; macOS's path_helper in /etc/zprofile does), which
 * would drop the shim folder the host put first. bash gets an rc file that does a login shell's sourcing and
 * then puts the folder back; zsh gets a ZDOTDIR whose files source the user's own and do the same. Other
 * shells start with `-l` and keep whatever PATH their start-up leaves.
 */
function shellStartup(ctx: ProfileContext, shellPath: string): { args: string[]; env: Record<string, string>; files: ProfileFile[] } {
  const dir = ctx.agentDir;
  const bin = ctx.binDir.replace(/'/g, `'\\''`);
  const repath = `case ":$PATH:" in *':${bin}:'*) ;; *) PATH='${bin}':"$PATH" ;; esac\nexport PATH\n`;
  const name = basename(shellPath);
  if (name === 'bash') {
    const rc = join(dir, 'bashrc');
    const text =
      '# Forkbench: what a login bash sources, then the board command first on PATH again.\n' +
      '[ -r /etc/profile ] && . /etc/profile\n' +
      'for f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do [ -r "$f" ] && { . "$f"; break; }; done\n' +
      repath;
    return { args: ['--rcfile', rc, '-i'], env: {}, files: [{ path: rc, content: text, mode: PRIVATE_FILE_MODE }] };
  }
  if (name === 'zsh') {
    const zdot = join(dir, 'zsh');
    const source = (f: string) => `ZDOTDIR="$HOME"; [ -r "$HOME/${f}" ] && . "$HOME/${f}"; ZDOTDIR='${zdot.replace(/'/g, `'\\''`)}'\n`;
    const files: ProfileFile[] = ['.zshenv', '.zprofile', '.zlogin'].map((f) => ({ path: join(zdot, f), content: source(f), mode: PRIVATE_FILE_MODE }));
    files.push({ path: join(zdot, '.zshrc'), content: `${source('.zshrc')}${repath}`, mode: PRIVATE_FILE_MODE });
    return { args: ['-l'], env: { ZDOTDIR: zdot }, files };
  }
  return { args: ['-l'], env: {}, files: [] };
}

const shell: AgentProfile = {
  kind: 'shell',
  label: 'Login shell',
  build(ctx) {
    const sh = resolveLoginShell(ctx.baseEnv);
    const start = shellStartup(ctx, sh);
    const plan = manualPlan(ctx, 'shell', sh, start.args);
    return { ...plan, env: { ...plan.env, ...start.env }, files: [...plan.files, ...start.files] };
  },
};

const custom: AgentProfile = {
  kind: 'custom',
  label: 'Custom command',
  build(ctx, cmd) {
    if (!cmd || cmd.command.trim().length === 0) throw new Error('a custom profile needs a command');
    return manualPlan(ctx, 'custom', cmd.command, [...(cmd.args ?? [])]);
  },
};

export const PROFILES: Readonly<Record<AgentKind, AgentProfile>> = { claude, codex, gemini, aider, opencode, shell, custom };

export function buildLaunch(kind: AgentKind, ctx: ProfileContext, customCommand?: CustomCommand): LaunchPlan {
  return PROFILES[kind].build(ctx, customCommand);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep merge for settings files: objects merge key by key, anything else from `ours` replaces. */
export function mergeJson(theirs: unknown, ours: unknown): unknown {
  if (!isPlainObject(theirs) || !isPlainObject(ours)) return ours;
  const out: Record<string, unknown> = { ...theirs };
  for (const [k, v] of Object.entries(ours)) out[k] = k in theirs ? mergeJson(theirs[k], v) : v;
  return out;
}

/**
 * Writes a plan's files, then its links. Folders created for them are private (0700); each file gets its
 * mode even if it existed. A merge source that exists but is not a JSON object is left alone and reported,
 * never clobbered.
 */
export async function writeProfileFiles(files: readonly ProfileFile[], links: readonly ProfileLink[] = []): Promise<void> {
  for (const file of files) {
    await mkdir(dirname(file.path), { recursive: true, mode: PRIVATE_DIR_MODE });
    let content = file.content;
    if (file.merge === 'json') {
      const source = file.base ?? file.path;
      const existing = await readFile(source, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      if (existing !== undefined && existing.trim().length > 0) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(existing);
        } catch {
          throw new Error(`${source} is not plain JSON (comments?); not merging the forkbench settings into it`);
        }
        if (!isPlainObject(parsed)) throw new Error(`${source} does not hold a JSON object; not merging into it`);
        content = json(mergeJson(parsed, JSON.parse(file.content)));
      }
    }
    await writeFile(file.path, content, { mode: file.mode });
    await chmod(file.path, file.mode);
  }
  for (const link of links) {
    const entries = await readdir(link.from).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    await mkdir(link.into, { recursive: true, mode: PRIVATE_DIR_MODE });
    const written = new Set(await readdir(link.into));
    for (const name of entries) if (!written.has(name)) await symlink(join(link.from, name), join(link.into, name));
  }
}
