import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { effectiveRenewIntervalMs } from '../../../src-shared/board/limits.js';
import type { BoardService } from '../../../src-main/board/boardService.js';
import { TypingConstants } from '../../../src-main/roster/assignmentTyping.js';
import { hostFixture } from '../../helpers/hosts.js';

/** The liveness check's /proc read, with a hook that runs while the real read is in flight. */
const proc = vi.hoisted(() => ({ onRead: null as ((pid: number) => void) | null }));
vi.mock('../../../src-main/pty/procReader.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src-main/pty/procReader.js')>();
  return {
    ...real,
    readTreeCpu: (pid: number) => {
      const reading = real.readTreeCpu(pid);
      proc.onRead?.(pid);
      return reading;
    },
  };
});

const fixture = hostFixture('dispose');
const openHost = fixture.open;
afterEach(async () => {
  proc.onRead = null;
  await fixture.cleanup();
});


const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A slow disk: once `slow.ms` is set, each board write is acknowledged that much later (after it was
 * applied and made durable). It widens the window in which dispose() awaits the shutdown's releases.
 */
function slowBoardWrites(board: BoardService): { ms: number } {
  const slow = { ms: 0 };
  const apply = board.apply.bind(board);
  board.apply = async <T>(op: Parameters<BoardService['apply']>[0]): Promise<T> => {
    const r = (await apply(op)) as T;
    if (slow.ms) await sleep(slow.ms);
    return r;
  };
  return slow;
}

/** Global timers armed from now on, and which of them are still pending. */
function trackTimers() {
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const armed: Array<{ ms: number; handle: unknown }> = [];
  const live = new Set<unknown>();
  globalThis.setTimeout = ((cb: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = realSet(
      (...a: unknown[]) => {
        live.delete(handle);
        cb(...a);
      },
      ms,
      ...args,
    );
    armed.push({ ms: ms ?? 0, handle });
    live.add(handle);
    return handle;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((h: Parameters<typeof clearTimeout>[0]) => {
    live.delete(h);
    realClear(h);
  }) as typeof clearTimeout;
  return {
    armedWith: (ms: number) => armed.filter((a) => a.ms === ms).length,
    pendingWith: (ms: number) => armed.filter((a) => a.ms === ms && live.has(a.handle)).length,
    restore: () => {
      globalThis.setTimeout = realSet;
      globalThis.clearTimeout = realClear;
    },
  };
}

describe('ThreadHost.dispose races', () => {
  it('livenessRoundRace: disposed while a liveness round reads a real agent’s /proc, the round neither re-arms its timer nor writes', async () => {
    const host = await openHost({ liveness: true });
    // A short interval, so the host's own timer starts a round soon (and its delay is recognisable).
    await host.board.run((e) => e.setSettings({ renewIntervalMs: 300 }));
    const every = effectiveRenewIntervalMs(host.board.state.settings);
    expect(every).toBe(300);
    await host.board.run((e) => e.addTask({ title: 'held while the Thread shuts' }));
    const agent = await host.roster.launch('custom', { command: 'exec sleep 600' });
    expect((await host.board.run((e) => e.claim(agent.id, 'T-1'))).ok).toBe(true);

    const slow = slowBoardWrites(host.board);
    const afterDispose: BoardEvent[] = [];
    let tracker: ReturnType<typeof trackTimers> | null = null;
    let disposing: Promise<void> | null = null;
    proc.onRead = (pid) => {
      if (pid !== agent.pid || disposing) return;
      // Mid-round: the real read of the agent's /proc is in flight. The shutdown's release takes a while.
      tracker = trackTimers();
      slow.ms = every + 200;
      host.board.onEvent((e) => afterDispose.push(e));
      disposing = host.dispose();
    };
    try {
      await vi.waitFor(() => expect(disposing).not.toBeNull(), { timeout: 10_000, interval: 20 });
      await disposing;
    } finally {
      (tracker as ReturnType<typeof trackTimers> | null)?.restore();
    }
    const t = tracker as unknown as ReturnType<typeof trackTimers>;
    expect(t.armedWith(every), 'liveness timers armed after dispose() began').toBe(0);
    expect(t.pendingWith(every)).toBe(0);
    // The only writes after dispose() began are the shutdown's own releases.
    expect(afterDispose.length).toBeGreaterThan(0);
    for (const e of afterDispose) expect(e).toMatchObject({ kind: 'claim-ended', reason: 'host-stopped' });
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'open', claim: null, lastClaim: { reason: 'host-stopped' } });
  });

  it('notifyTimerRace: an assignment message due while the Thread shuts is never typed into the pane', async () => {
    const host = await openHost({ typingQuietMs: 1 });
    await host.board.run((e) => e.addTask({ title: 'review the docs' }));
    const agent = await host.roster.launch('custom', { command: 'exec cat' });
    const session = host.roster.get(agent.id)?.session!;
    const written: string[] = [];
    const write = session.write.bind(session);
    session.write = (data: string) => {
      written.push(data);
      write(data);
    };
    expect((await host.board.run((e) => e.assign('T-1', agent.id))).ok).toBe(true);
    // Let the message be queued: the host now polls every pollMs for a quiet moment to type it.
    await new Promise((r) => setImmediate(r));
    const slow = slowBoardWrites(host.board);
    slow.ms = TypingConstants.pollMs + 250;
    await host.dispose();
    await sleep(TypingConstants.pollMs);
    expect(written).toEqual([]);
    expect(host.board.state.tasks.get('T-1')).toMatchObject({ state: 'open', lastClaim: { reason: 'host-stopped' } });
  });
});
