/**
 * Whether and how this host contains its agents: on by default where bubblewrap works (bwrapProbe.ts); where
 * it does not, agents run as before and the window is told once, plainly, with the fix.
 */
import type { AgentFolders, HostFolders } from './agentReach.js';
import { agentReach, cliStateEnv, verifyReach } from './agentReach.js';
import type { SandboxSupport } from './bwrapProbe.js';
import { sandboxArgs } from './sandboxArgs.js';

/** How a pane's command runs: inside bwrap, or as it is (with why). */
export type Containment = { by: 'bwrap' } | { by: null; why: string };

export interface ContainedLaunch {
  command: string;
  args: string[];
  /** What the agent's environment gains inside the sandbox (where its CLI keeps state: cliStateEnv). */
  env: Record<string, string>;
  containment: Containment;
}

export class AgentSandbox {
  constructor(
    private readonly support: SandboxSupport,
    private readonly host: HostFolders,
    /** Profiles the person runs uncontained (a launch option or the Thread's setting). */
    private readonly uncontained: (profile: string) => boolean = () => false,
  ) {}

  /** The one plain line the window shows where agents are not contained, or null where they are. */
  get warning(): string | null {
    return this.support.ok ? null : `agents are not contained on this machine: ${this.support.reason}. To fix it: ${this.support.fix}`;
  }

  /** Whether agents of this profile run in a sandbox here: their CLIs' own sandboxes cannot nest in it. */
  contains(profile: string): boolean {
    return this.support.ok && !this.uncontained(profile);
  }

  wrap(command: string, args: readonly string[], agent: AgentFolders): ContainedLaunch {
    const s = this.support;
    if (!s.ok) return { command, args: [...args], env: {}, containment: { by: null, why: s.reason } };
    if (this.uncontained(agent.profile)) return { command, args: [...args], env: {}, containment: { by: null, why: `the person turned the sandbox off for ${agent.profile}` } };
    const env = cliStateEnv(agent.profile, agent.env);
    return { command: s.bwrap, args: sandboxArgs(agentReach(this.host, { ...agent, env: { ...agent.env, ...env } }), command, args), env, containment: { by: 'bwrap' } };
  }

  /** A verify command's argv, run contained in the folder it checks (verifyReach); as it is where agents are
   *  not contained here, since a verify can reach nothing its agent could not. */
  wrapVerify(argv: readonly string[], cwd: string, profile: string | null | undefined): readonly string[] {
    const s = this.support;
    if (!s.ok || (profile && this.uncontained(profile))) return argv;
    const [command = '/bin/sh', ...args] = argv;
    return [s.bwrap, ...sandboxArgs(verifyReach(this.host, cwd), command, args)];
  }
}
