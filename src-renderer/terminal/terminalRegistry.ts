import type { PaneHost } from './paneHost.js';
import type { Transport } from '../transport/types.js';
import { PaneTerminal, type ReportError } from './paneTerminal.js';
import { DEFAULT_TERMINAL_SIZE, TerminalSize } from '../../src-shared/terminal/terminalSize.js';
import { Emitter } from '../../src-shared/lifecycle/emitter.js';

/** Approximate cell size of the terminal font, to size a launch before any pane has been fitted. */
const CELL = { width: 7.8, height: 17 } as const;

/**
 * Owns every pane's terminal for the Thread on screen (outside React: terminals outlive tab switches and
 * their output never passes through the store). Components find panes here by agent id.
 */
export class TerminalRegistry implements PaneHost {
  private key: string | null = null;
  private readonly panes = new Map<string, PaneTerminal>();
  private readonly changes = new Emitter<void>();
  private lastFit: { cols: number; rows: number } | null = null;
  /** Changes whenever panes are created or disposed (for useSyncExternalStore). */
  version = 0;
  /** The element new panes will be shown in, for sizing launches before any pane was fitted. */
  area: HTMLElement | null = null;

  constructor(
    private readonly transport: Transport,
    private readonly reportError: ReportError,
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    const sub = this.changes.event(listener);
    return () => sub.dispose();
  };

  getVersion = (): number => this.version;

  get(agentId: string): PaneTerminal | undefined {
    return this.panes.get(agentId);
  }

  setThread(key: string | null): void {
    if (key === this.key) return;
    const old = this.key;
    for (const [id, p] of this.panes) {
      p.dispose();
      // This window stops consuming the old Thread's panes: the host must not wait for its acks.
      if (old) this.transport.call('agent.detach', { key: old, agentId: id }).catch(() => undefined);
    }
    this.panes.clear();
    this.key = key;
    this.changed();
  }

  sync(agentIds: readonly string[], restoreAll: boolean): void {
    const key = this.key;
    if (!key) return;
    const want = new Set(agentIds);
    let changed = false;
    for (const [id, p] of this.panes) {
      if (!want.has(id)) {
        p.dispose();
        this.panes.delete(id);
        changed = true;
      } else if (restoreAll) {
        void p.restore();
      }
    }
    for (const id of agentIds) {
      if (this.panes.has(id)) continue;
      const p = new PaneTerminal(key, id, this.transport, this.reportError);
      p.onFitted = (size) => (this.lastFit = size);
      this.panes.set(id, p);
      void p.restore();
      changed = true;
    }
    if (changed) this.changed();
  }

  data(agentId: string, data: string): boolean {
    const p = this.panes.get(agentId);
    if (!p) return false;
    p.feed.data(data);
    return true;
  }

  preferredSize(): { cols: number; rows: number } {
    if (this.lastFit) return this.lastFit;
    const r = this.area?.getBoundingClientRect();
    if (r && r.width > 50 && r.height > 50) {
      return { cols: clamp(Math.floor((r.width - 16) / CELL.width), TerminalSize.usableCols, TerminalSize.maxCols), rows: clamp(Math.floor((r.height - 8) / CELL.height), TerminalSize.usableRows, TerminalSize.maxRows) };
    }
    return { ...DEFAULT_TERMINAL_SIZE };
  }

  dispose(): void {
    this.setThread(null);
  }

  private changed(): void {
    this.version++;
    this.changes.fire();
  }
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, n));
}
