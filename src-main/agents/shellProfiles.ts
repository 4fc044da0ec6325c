/** The panes a person drives: a shell (the user's login shell), or a command Forkbench has no profile for. */
import { basename, join } from 'node:path';
import { shellQuote } from '../../src-shared/text/shellQuote.js';
import {
  AgentProfile,
  LaunchPlan,
  PRIVATE_FILE_MODE,
  ProfileContext,
  ProfileFile,
  boardInstructions,
  forkbenchEnv,
  instructionsFile,
  resolveLoginShell,
  standardMcpConfig,
} from './profileKit.js';

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
 * The prompt marks terminals read (OSC 133, as VS Code's shell integration writes them): A as each prompt is
 * drawn, C as a command starts to run. The host reads them as the shell's state: idle at its prompt, working
 * while a command runs. Added after the user's own start-up files, to what they set, never in place of it.
 * A comes last, after the user's own prompt commands: the host believes it only while the shell holds the
 * terminal (shellForeground.ts), and a command those run holds it while it runs. Joined with a newline, which
 * ends whatever theirs ends with (`&`, `;`); the status they leave is kept for a prompt that shows it.
 */
const BASH_PROMPT_MARKS =
  "__forkbench_prompt() { local s=$?; printf '\\033]133;A\\007'; return $s; }\n" +
  'case "${PROMPT_COMMAND-}" in *__forkbench_prompt*) ;; *) PROMPT_COMMAND="${PROMPT_COMMAND:+$PROMPT_COMMAND\n}__forkbench_prompt" ;; esac\n' +
  "PS0=\"${PS0-}\"$'\\033]133;C\\007'\n";
// add-zsh-hook appends: A comes after the precmd hooks the user's .zshrc added, as bash's comes last.
const ZSH_PROMPT_MARKS =
  "__forkbench_prompt() { printf '\\033]133;A\\007'; }\n" +
  "__forkbench_exec() { printf '\\033]133;C\\007'; }\n" +
  'autoload -Uz add-zsh-hook && add-zsh-hook precmd __forkbench_prompt && add-zsh-hook preexec __forkbench_exec\n';

/**
 * A login shell whose start-up files run as usual and which still finds `forkbench` afterwards. Login
 * start-up files reset PATH (Debian's /etc/profile does; macOS's path_helper in /etc/zprofile does), which
 * would drop the shim folder the host put first. bash gets an rc file that does a login shell's sourcing and
 * then puts the folder back; zsh gets a ZDOTDIR whose files source the user's own and do the same. Other
 * shells start with `-l` and keep whatever PATH their start-up leaves.
 */
function shellStartup(ctx: ProfileContext, shellPath: string): { args: string[]; env: Record<string, string>; files: ProfileFile[] } {
  const dir = ctx.agentDir;
  const repath = `case ":$PATH:" in *${shellQuote(`:${ctx.binDir}:`)}*) ;; *) PATH=${shellQuote(ctx.binDir)}:"$PATH" ;; esac\nexport PATH\n`;
  const name = basename(shellPath);
  if (name === 'bash') {
    const rc = join(dir, 'bashrc');
    const text =
      '# Forkbench: what a login bash sources, then the board command first on PATH again.\n' +
      '[ -r /etc/profile ] && . /etc/profile\n' +
      'for f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do [ -r "$f" ] && { . "$f"; break; }; done\n' +
      repath +
      BASH_PROMPT_MARKS;
    return { args: ['--rcfile', rc, '-i'], env: {}, files: [{ path: rc, content: text, mode: PRIVATE_FILE_MODE }] };
  }
  if (name === 'zsh') {
    const zdot = join(dir, 'zsh');
    const source = (f: string) => `ZDOTDIR="$HOME"; [ -r "$HOME/${f}" ] && . "$HOME/${f}"; ZDOTDIR=${shellQuote(zdot)}\n`;
    const files: ProfileFile[] = ['.zshenv', '.zprofile', '.zlogin'].map((f) => ({ path: join(zdot, f), content: source(f), mode: PRIVATE_FILE_MODE }));
    files.push({ path: join(zdot, '.zshrc'), content: `${source('.zshrc')}${repath}${ZSH_PROMPT_MARKS}`, mode: PRIVATE_FILE_MODE });
    return { args: ['-l'], env: { ZDOTDIR: zdot }, files };
  }
  return { args: ['-l'], env: {}, files: [] };
}

export const shell: AgentProfile = {
  kind: 'shell',
  // What a person looks for in the Launch menu: the user's own login shell, with `forkbench` on PATH.
  label: 'Shell',
  // A person drives it: what is typed runs.
  notices: 'shown',
  build(ctx) {
    const sh = resolveLoginShell(ctx.baseEnv);
    const start = shellStartup(ctx, sh);
    const plan = manualPlan(ctx, 'shell', sh, start.args);
    return { ...plan, env: { ...plan.env, ...start.env }, files: [...plan.files, ...start.files] };
  },
};

export const custom: AgentProfile = {
  kind: 'custom',
  label: 'Custom command',
  // Any program at all: typing into one whose input Forkbench does not know may run or edit something.
  notices: 'shown',
  build(ctx, cmd) {
    if (!cmd || cmd.command.trim().length === 0) throw new Error('a custom profile needs a command');
    return manualPlan(ctx, 'custom', cmd.command, [...(cmd.args ?? [])]);
  },
};

