/**
 * Whether and how this host contains its agents: on by default where bubblewrap works (bwrapProbe.ts); where
 * it does not, agents run as before and the window is told once, plainly, with the fix. A person may turn it
 * off per profile, by the host's launch option (`serve --uncontained`) or the Thread's setting: the same plain
 * warning says so, and each agent's tab says whether it is contained (its Containment, kept with its pane).
 */
import type { Containment } from '../../src-shared/agents/containment.js';
import type { AgentFolders, HostFolders } from './agentReach.js';
import { agentReach, cliStateEnv, verifyReach } from './agentReach.js';
import type { SandboxSupport } from './bwrapProbe.js';
import { sandboxArgs } from './sandboxArgs.js';

export type { Containment };

export interface ContainedLaunch {
  command: string;
  args: string[];
  /** What the agent's environment gains inside the sandbox (where its CLI keeps state: cliStateEnv). */
  env: Record<string, string>;
  containment: Containment;
}

/** The profiles a person runs uncontained: the union of the host's launch option and the Thread's setting. */
export interface SandboxOff {
  /** `serve --uncontained PROFILE|all`, fixed for the host's run. */
  option: readonly string[];
  /** The Thread's setting, read at each launch: a change applies to the agents launched after it. */
  setting: () => readonly string[];
}

const NONE_OFF: SandboxOff = { option: [], setting: () => [] };

export class AgentSandbox {
  constructor(
    private readonly support: SandboxSupport,
    private readonly host: HostFolders,
    private readonly off: SandboxOff = NONE_OFF,
  ) {}

  /** The one plain line the window shows where agents are not contained on this machine, or null where they are. */
  get warning(): string | null {
    return this.support.ok ? null : `agents are not contained on this machine: ${this.support.reason}. To fix it: ${this.support.fix}`;
  }

  /** Whether agents of this profile run in a sandbox here: their CLIs' own sandboxes cannot nest in it. */
  contains(profile: string): boolean {
    return this.support.ok && this.offFor(profile) === null;
  }

  /** What the window is told now, one plain line each: the machine's warning, or where a person turned the
   *  sandbox off (the option, the setting), each with what undoes it. Empty where every agent is contained. */
  warnings(): string[] {
    const machine = this.warning;
    // Nothing is contained here at all: which profiles a person also turned off adds nothing to that.
    if (machine) return [machine];
    const out: string[] = [];
    const option = new Set(this.off.option);
    if (option.has('all')) out.push("agents are not contained: the sandbox is turned off for every profile by the host's launch option. To fix it: start the host without --uncontained");
    else if (option.size) out.push(`agents of ${[...option].join(', ')} are not contained: the sandbox is turned off for them by the host's launch option. To fix it: start the host without --uncontained`);
    const setting = option.has('all') ? [] : this.off.setting().filter((p) => !option.has(p));
    if (setting.length) out.push(`agents of ${setting.join(', ')} are not contained: the sandbox is turned off for them in this Thread's settings. To fix it: untick them under "Run without a sandbox" in Thread settings`);
    return out;
  }

  /** Why a person's choice runs `profile` uncontained, or null where none does. */
  private offFor(profile: string): string | null {
    if (this.off.option.includes(profile) || this.off.option.includes('all')) return `the sandbox is turned off for ${profile} by the host's launch option (--uncontained)`;
    if (this.off.setting().includes(profile)) return `the sandbox is turned off for ${profile} in this Thread's settings`;
    return null;
  }

  wrap(command: string, args: readonly string[], agent: AgentFolders): ContainedLaunch {
    const s = this.support;
    if (!s.ok) return { command, args: [...args], env: {}, containment: { by: null, why: s.reason } };
    const off = this.offFor(agent.profile);
    if (off) return { command, args: [...args], env: {}, containment: { by: null, why: off } };
    const env = cliStateEnv(agent.profile, agent.env);
    return { command: s.bwrap, args: sandboxArgs(agentReach(this.host, { ...agent, env: { ...agent.env, ...env } }), command, args), env, containment: { by: 'bwrap' } };
  }

  /** A verify command's argv, run contained in the folder it checks (verifyReach); as it is where agents are
   *  not contained here, since a verify can reach nothing its agent could not. */
  wrapVerify(argv: readonly string[], cwd: string, profile: string | null | undefined): readonly string[] {
    const s = this.support;
    if (!s.ok || (profile && this.offFor(profile) !== null)) return argv;
    const [command = '/bin/sh', ...args] = argv;
    return [s.bwrap, ...sandboxArgs(verifyReach(this.host, cwd), command, args)];
  }
}
