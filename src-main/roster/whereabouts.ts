import * as fs from 'node:fs';
import { resolve } from 'node:path';
import { callerOf, whereIs, type Caller, type Whereabouts } from '../agents/peerCredentials.js';
import type { Panes } from '../agents/peerJudge.js';
import { hostGitPids } from '../git/git.js';
import { listPaneCwds } from '../pty/procReader.js';
import type { PaneLookup } from './paneRelay.js';

/**
 * Where the processes of this host run: in which agent's pane (or the verify command it asked for), or in
 * none (a person's). The person check, the secret binding and a folder about to be removed ask it; it keeps
 * the verify commands' roots, and reads the panes the roster keeps.
 */
export class ProcessWhereabouts implements Panes {
  /** Verify commands running: their root's pid, and the agent whose done they check. */
  private readonly verifyRoots = new Map<number, string>();

  constructor(private readonly d: { panes: PaneLookup; nameOf: (agentId: string) => string }) {}

  /** The live agents of this host with a process (the pane's own, or one it started) standing in `folder` or
   *  below it: a folder about to be removed takes their current folder with it. */
  async standingIn(folder: string): Promise<string[]> {
    const roots = new Map<number, string>();
    for (const p of this.d.panes.all()) if (p.agent.alive && p.agent.pid !== null) roots.set(p.agent.pid, p.agent.id);
    // The kernel names a current folder by its real path: the folder is compared as given and as resolved.
    const names = new Set([resolve(folder)]);
    try {
      names.add(fs.realpathSync(folder));
    } catch {
      // already gone: its name as given is all there is
    }
    const inside = (cwd: string) => [...names].some((f) => cwd === f || cwd.startsWith(`${f}/`));
    const found = new Set<string>();
    for (const { owner, cwd } of await listPaneCwds(roots)) if (inside(cwd)) found.add(owner);
    return [...found];
  }

  /** Whether a process is a person's or runs in an agent pane (which): how the host tells a person's git from
   *  an agent's. */
  callerOf(pid: number | null): Caller {
    const roots = new Map<number, string>();
    for (const p of this.d.panes.all()) if (p.agent.pid !== null) roots.set(p.agent.pid, p.agent.name);
    for (const [pid, agentId] of this.verifyRoots) roots.set(pid, `${this.nameOf(agentId)} (its verify command)`);
    // What the host's own git runs (an ssh, a credential helper, anything those start) acts for no person.
    for (const gitPid of hostGitPids()) roots.set(gitPid, "(the host's own git)");
    return callerOf(pid, roots);
  }

  /** The agent whose pane (or verify command) a process runs in: a secret works only from there. */
  paneOf(pid: number | null): Whereabouts<string> {
    const roots = new Map<number, string>();
    for (const p of this.d.panes.all()) if (p.agent.pid !== null && p.agent.alive) roots.set(p.agent.pid, p.agent.id);
    for (const [pid, agentId] of this.verifyRoots) roots.set(pid, agentId);
    return whereIs(pid, roots);
  }

  /** An agent's name as the roster gives it, for a refusal's message. */
  nameOf(agentId: string): string {
    return this.d.nameOf(agentId);
  }

  /**
   * A verify command runs the task's code, which the agent wrote: its process tree counts as the agent's
   * pane (the person check says so), from its start until `untrackVerify`. `pid` leads its own session.
   */
  trackVerify(pid: number, agentId: string): void {
    this.verifyRoots.set(pid, agentId);
  }

  untrackVerify(pid: number): void {
    this.verifyRoots.delete(pid);
  }
}
