import { serializeBoard } from '../../src-shared/board/serialized.js';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type {
  AgentInfo,
  ThreadSnapshot,
  WindowMethod,
  WindowParams,
  WindowPush,
  WindowResult,
} from '../../src-shared/protocol/windowApi.js';
import { ManualClock } from '../../src-main/base/clock.js';
import { LeaseEngine } from '../../src-main/board/leaseEngine.js';
import { HostCallError, type ConnectionState, type Transport } from '../../src-renderer/transport/types.js';

/** A real lease engine on a manual clock, as the host runs it: the events the renderer gets are real ones. */
export function engineWith(tasks: string[] = []) {
  const clock = new ManualClock(1_000);
  const engine = new LeaseEngine(clock);
  const events: BoardEvent[] = [];
  engine.onEvent((e) => events.push(e));
  engine.createThread('0123456789abcdef', 'ship it');
  for (const title of tasks) engine.addTask({ title });
  return { clock, engine, events };
}

export function snapshotOf(
  engine: LeaseEngine,
  o: { agents?: AgentInfo[]; log?: BoardEvent[]; key?: string; git?: ThreadSnapshot['git']; notices?: ThreadSnapshot['notices']; store?: ThreadSnapshot['store'] } = {},
): ThreadSnapshot {
  const b = engine.state;
  return {
    key: o.key ?? '0123456789abcdef',
    folder: '/work/project',
    board: serializeBoard(b),
    boardNow: engine.now(),
    agents: o.agents ?? [],
    log: o.log ?? [],
    notices: o.notices ?? [],
    profiles: [
      { id: 'shell', label: 'Shell', available: true },
      { id: 'claude', label: 'Claude Code', available: false },
      { id: 'custom', label: 'Custom command', available: true },
    ],
    git: o.git ?? { isolated: true, repoRoot: '/work/project', baseBranch: 'main' },
    store: o.store ?? { kind: 'journal' },
  };
}

export function agent(id: string, o: Partial<AgentInfo> = {}): AgentInfo {
  return { id, name: o.name ?? id, profile: 'shell', status: 'running', pid: 100, exit: null, claims: [], ...o };
}

type Handler = (params: any) => unknown;

/** An in-memory transport: calls go to handlers (unhandled ones resolve null), pushes are injected. */
export class FakeTransport implements Transport {
  readonly kind = 'websocket' as const;
  state: ConnectionState = 'connected';
  readonly calls: Array<{ method: WindowMethod; params: any }> = [];
  readonly handlers: Partial<Record<WindowMethod, Handler>> = {};
  private readonly pushListeners = new Set<(p: WindowPush) => void>();
  private readonly stateListeners = new Set<(s: ConnectionState) => void>();

  on<M extends WindowMethod>(method: M, h: (params: WindowParams<M>) => unknown): this {
    this.handlers[method] = h as Handler;
    return this;
  }

  async call<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>> {
    this.calls.push({ method, params });
    if (this.state !== 'connected') throw new HostCallError('disconnected', 'not connected');
    const h = this.handlers[method];
    return (h ? await h(params) : null) as WindowResult<M>;
  }

  callsOf(method: WindowMethod): any[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.params);
  }

  subscribe(l: (p: WindowPush) => void): () => void {
    this.pushListeners.add(l);
    return () => this.pushListeners.delete(l);
  }

  onState(l: (s: ConnectionState) => void): () => void {
    this.stateListeners.add(l);
    return () => this.stateListeners.delete(l);
  }

  push(p: WindowPush): void {
    for (const l of this.pushListeners) l(p);
  }

  setState(s: ConnectionState): void {
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }

  dispose(): void {}
}

/** Let pending promise callbacks run. */
export const settle = () => new Promise((r) => setTimeout(r, 0));
