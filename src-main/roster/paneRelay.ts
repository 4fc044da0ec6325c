import { Emitter } from '../../src-shared/lifecycle/emitter.js';
import type { AgentStates } from './agentStates.js';
import type { Pane } from './roster.js';

/** What the relay reads of the roster's panes: it finds them, it never makes or ends one. */
export interface PaneLookup {
  get(agentId: string): Pane | undefined;
  all(): Iterable<Pane>;
}

/**
 * The agents' terminals as the windows and the host's messages reach them: each pane's output out, a person's
 * keys, sizes and acks in, its screen for a window that opens, and the host's own messages typed (or shown) in.
 * The roster makes and ends the panes; this only carries what goes through them.
 */
export class PaneRelay {
  /** Each pane's output, as it comes. */
  readonly onData = new Emitter<{ agentId: string; data: string }>();

  constructor(private readonly d: { panes: PaneLookup; states?: AgentStates }) {}

  /** A pane the roster just wired: its output is relayed from now on, until its session is disposed. */
  relay(pane: Pane): void {
    const agentId = pane.agent.id;
    pane.session.onData((data) => this.onData.fire({ agentId, data }));
  }

  input(agentId: string, data: string): void {
    const p = this.d.panes.get(agentId);
    if (!p) return;
    p.typist.noteInput();
    this.d.states?.input(agentId, data);
    p.session.write(data);
  }

  resize(agentId: string, cols: number, rows: number): void {
    const p = this.d.panes.get(agentId);
    if (!p) return;
    p.launch.cols = cols;
    p.launch.rows = rows;
    p.session.resize(cols, rows);
  }

  /** A window went away: it no longer paces any pane of this Thread. */
  detachEverywhere(consumer: string): void {
    for (const p of this.d.panes.all()) p.session.detach(consumer);
  }

  /** The pane's screen and scrollback, for a window that opens or reloads. */
  async screen(agentId: string): Promise<string> {
    const p = this.d.panes.get(agentId);
    if (!p) return '';
    await p.session.flushMirror();
    return p.session.serialize();
  }

  /** A message of the host's to the agent, typed into its pane when it is quiet or shown in its output, as its
   *  profile takes them; nothing for a gone agent. Resolves once it is in the pane (or never will be). */
  tell(agentId: string, text: string): Promise<void> {
    const p = this.d.panes.get(agentId);
    return p?.agent.alive ? p.typist.say(text) : Promise.resolve();
  }

  dispose(): void {
    this.onData.dispose();
  }
}
