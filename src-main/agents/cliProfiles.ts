/** The profiles of the agent CLIs Forkbench knows: Claude Code, Codex, Gemini CLI, Aider, OpenCode. */
import { join } from 'node:path';
import {
  AgentProfile,
  IDENTITY_VARS,
  MCP_SERVER_NAME,
  PRIVATE_FILE_MODE,
  ProfileContext,
  SHARED_FILE_MODE,
  boardInstructions,
  forkbenchEnv,
  identityRefs,
  instructionsFile,
  json,
  mcpCommand,
  standardMcpConfig,
  toml,
} from './profileKit.js';
import { claudeHookSettings, geminiHooks, opencodePlugin } from './stateHooks.js';
import { codexNativeBinary } from './codexNative.js';
import { shellQuote } from '../../src-shared/text/shellQuote.js';

export const claude: AgentProfile = {
  kind: 'claude',
  label: 'Claude Code',
  notices: 'typed',
  build(ctx) {
    const mcpPath = join(ctx.agentDir, 'claude-mcp.json');
    const instructions = boardInstructions(ctx, { mcp: true });
    // The agent's state hooks (stateHooks.ts): a settings layer of their own, the user's stay as they are. The
    // same layer names the status line: `forkbench statusline` reports the rate-limit headroom Claude Code hands
    // its status line to the board (issue 47), and runs the person's own status line, when their settings name
    // one, on the same input for the pane to show (src-main/cli/statusLine.ts), so theirs is not lost.
    const stateHooks = claudeHookSettings(ctx, { statusLine: { type: 'command', command: statusLineCommand(ctx), padding: 0 } });
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
        '--settings',
        stateHooks.path,
        '--append-system-prompt',
        instructions,
      ],
      env: forkbenchEnv(ctx),
      files: [{ path: mcpPath, content: standardMcpConfig(ctx), mode: PRIVATE_FILE_MODE }, instructionsFile(ctx, instructions), stateHooks],
      instructionsVia: 'system-prompt',
      mcp: true,
    };
  },
};

/** Claude Code's status-line command, by absolute paths as the state hooks run theirs (a login shell's PATH). */
export function statusLineCommand(ctx: ProfileContext): string {
  return `${shellQuote(ctx.nodePath)} ${shellQuote(ctx.cliPath)} statusline`;
}

/** The name Codex's binary answers to as its Linux sandbox helper. */
export const CODEX_SANDBOX_HELPER = 'codex-linux-sandbox';

export const codex: AgentProfile = {
  kind: 'codex',
  label: 'Codex CLI',
  notices: 'typed',
  build(ctx) {
    const { command, args } = mcpCommand(ctx);
    const key = `mcp_servers.${MCP_SERVER_NAME}`;
    const instructions = boardInstructions(ctx, { mcp: true, sandboxedShell: !ctx.contained });
    // Codex's Linux sandbox runs each shell command under bubblewrap, which starts Codex's own binary again
    // as `codex-linux-sandbox` (the name it dispatches on). Codex prefers a bwrap on PATH (Debian's
    // `bubblewrap`, which Flatpak brings) to the one it bundles, and names that helper to it by a link it makes
    // at start under $CODEX_HOME/tmp, or, when it made none, bare, for bwrap to find on PATH. It makes none
    // when CODEX_HOME lies in the temp folder ($TMPDIR, else /tmp: a home in /tmp, as in containers and
    // throwaway homes), and every sandboxed command then fails: `bwrap: execvp codex-linux-sandbox: No such
    // file or directory`. So the agent's private folder holds that link too, on PATH after Forkbench's own
    // commands (Codex puts its own first when it makes one). Its bundled bwrap it hands the binary's own path.
    const helpers = join(ctx.agentDir, 'bin');
    const codexEnv = ctx.baseEnv ?? process.env;
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
        // In Forkbench's sandbox Codex's own cannot start: its bubblewrap mounts a /proc of its own, which the
        // kernel refuses inside another pid namespace's /proc that bwrap has partly covered (`Can't mount proc
        // on /newroot/proc`, measured with bwrap 0.8 and Codex's bundled one). Ours holds its shell instead:
        // its own folders writable, the host out of reach (docs/sandbox.md).
        ...(ctx.contained ? ['--sandbox', 'danger-full-access'] : []),
        // The agent runs in the pane's own process tree, not in a shared background server: the host's
        // liveness check and its kill on pane close and exit reach only the pane's processes.
        '--no-daemon',
        // `developer_instructions` adds a developer message without replacing codex's base instructions.
        // `-c` accepts unknown keys silently, so an older codex just ignores it; the file stays as fallback.
        '-c',
        `developer_instructions=${toml(instructions)}`,
        // No state hooks for Codex: hooks given on its command line stop it at a "Hooks need review" dialog
        // before its first turn (codex 0.x asks the person to trust new hooks). Its state comes from the
        // terminal (stateSignals.ts): its program status (OSC 7501, sent whatever its settings) says working,
        // blocked and done, and its notification of an approval request (OSC 9, asked for here) names the
        // command; its other notifications are not read (a finished turn's carries the answer). Always, not
        // only while the pane is unfocused: whether to tell the person is the window's call. The pane is the
        // terminal these reach, so the user's own notification settings lose nothing. (All notifications: a
        // list of kinds given with -c left codex 0.171 sending none.)
        '-c',
        'tui.notifications=true',
        '-c',
        `tui.notification_method=${toml('osc9')}`,
        '-c',
        `tui.notification_condition=${toml('always')}`,
      ],
      env: forkbenchEnv(ctx, [helpers]),
      files: [instructionsFile(ctx, instructions)],
      aliases: [{ path: join(helpers, CODEX_SANDBOX_HELPER), target: () => codexNativeBinary(codexEnv) }],
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

export const gemini: AgentProfile = {
  kind: 'gemini',
  label: 'Gemini CLI',
  notices: 'typed',
  build(ctx) {
    const instructions = boardInstructions(ctx, { mcp: true });
    // Gemini CLI reads MCP servers only from settings files: system paths it accepts only in root-owned
    // folders, and the project's .gemini/ is the user's repo. GEMINI_CLI_HOME moves its home folder, so the
    // agent gets a home of its own whose .gemini/settings.json is the user's own settings with the board's
    // server merged in, and whose other entries (logins, memory, commands, history) link to the user's.
    // In the folder that outlives the host: Gemini keeps the session a resume goes back to under its home.
    const home = join(ctx.stateDir ?? ctx.agentDir, 'gemini-home');
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
          content: json({ mcpServers: { [MCP_SERVER_NAME]: { command, args, env: identityRefs((k) => `$${k}`), trust: true } }, hooks: geminiHooks(ctx) }),
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

/** The analytics log the aider profile names with `--analytics-log`, in the agent's folder that outlives the host,
 *  where the host's usage reader (src-main/usage/aiderUsage.ts) looks: a restart reads the same file again (its
 *  turns' ids count them once). */
export const aiderLogPath = (stateDir: string): string => join(stateDir, 'aider-analytics.jsonl');

export const aider: AgentProfile = {
  kind: 'aider',
  label: 'Aider',
  notices: 'typed',
  build(ctx) {
    const instructions = instructionsFile(ctx, boardInstructions(ctx, { mcp: false }));
    return {
      kind: 'aider',
      command: 'aider',
      // Aider speaks no MCP: it gets the instructions as a read-only context file and runs `forkbench`
      // through its shell-command suggestions.
      args: ['--read', instructions.path],
      // What it spent is read from its analytics log (src-main/usage/aiderUsage.ts), which Aider writes to the
      // file its --analytics-log names whether or not its analytics go anywhere: sending them stays the person's
      // choice. Given as the option's variable (Aider reads every option as AIDER_<NAME>), which outranks the
      // person's config file as the flag would; in the folder that outlives the host, where the reader looks.
      env: { ...forkbenchEnv(ctx), AIDER_ANALYTICS_LOG: aiderLogPath(ctx.stateDir ?? ctx.agentDir) },
      files: [instructions],
      instructionsVia: 'read-only-file',
      mcp: false,
    };
  },
};

export const opencode: AgentProfile = {
  kind: 'opencode',
  label: 'OpenCode',
  notices: 'typed',
  build(ctx) {
    const configPath = join(ctx.agentDir, 'opencode.json');
    const instructions = instructionsFile(ctx, boardInstructions(ctx, { mcp: true }));
    const { command, args } = mcpCommand(ctx);
    // The agent's state reports (stateHooks.ts): OpenCode's events through a plugin in the agent's folder.
    const plugin = opencodePlugin(ctx);
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
            plugin: [plugin.spec],
          }),
          mode: SHARED_FILE_MODE,
        },
        instructions,
        plugin.file,
      ],
      instructionsVia: 'config-instructions',
      mcp: true,
    };
  },
};

/** For panes a person drives (a shell, or an agent we have no profile for): the instructions and a standard
 *  MCP config sit in the agent folder, named by FORKBENCH_INSTRUCTIONS and FORKBENCH_MCP_CONFIG, so e.g.
 *  `claude --mcp-config "$FORKBENCH_MCP_CONFIG"` works from the shell. */
