/**
 * One host of the PostgreSQL board's bench in a thread of its own (pgBoardBench.ts, "a thread each"): its own
 * pool and PgBoard on the shared board, and its own agents on the goal's schedule. Two machines have two event
 * loops; two hosts in one thread share one, and each host's time holding the board's lock then includes the
 * other host's work and all of the other's agents' (issue 45 asked to measure that before counting it).
 *
 * The main thread says when the schedule starts (`go`, on performance.timeOrigin + now(), which threads of one
 * process share: one clock); this thread answers with its writes' latencies and its pool's meter, and with when
 * it heard of each `done` the main thread's host answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Agent, claimTasks, onSchedule, openHost } from './pgBoardKit.js';

export interface ThreadHostData {
  url: string;
  name: string;
  hostId: string;
  dir: string;
  /** This host's agents: their number on the schedule and the tasks each claims, in order. */
  agents: Array<{ id: string; k: number; tasks: string[] }>;
}

/** What the main thread sends. */
export type ToThread = { type: 'go'; t0: number } | { type: 'heard'; tasks: string[] } | { type: 'close' };
/** What this thread sends back. */
export type FromThread =
  | { type: 'ready' }
  | { type: 'ran'; latencies: number[]; lockHeld: number[]; lockWait: number[]; underLockClient: number[]; underLockCommit: number[]; keyedBatches: number[] }
  | { type: 'heard'; at: Array<[string, number]> }
  | { type: 'closed' };

const port = parentPort;
if (!port) throw new Error('pgHostThread runs as a worker thread of pgBoardBench');
const data = workerData as ThreadHostData;
const send = (m: FromThread) => port.postMessage(m);
/** This thread's time on the clock every thread of the process shares. */
const shared = (): number => performance.timeOrigin + performance.now();

const h = await openHost(data.url, data.name, data.hostId, data.dir);
const heardAt = new Map<string, number>();
h.board.onEvent((e) => {
  if (e.kind === 'submitted') heardAt.set(e.taskId, shared());
});
const agents: Agent[] = data.agents.map((a) => ({ id: a.id, host: h.board }));
for (const a of agents) h.board.hostAgent(a.id);
const held = await claimTasks(h.board, data.agents);

port.on('message', (m: ToThread) => {
  void (async () => {
    if (m.type === 'go') {
      h.meter.reset();
      const latencies = await onSchedule(
        data.agents.map((a, i) => ({ agent: agents[i] as Agent, k: a.k, held: held[i] as Array<{ task: string; token: number }> })),
        m.t0 - performance.timeOrigin,
      );
      const { lockHeld, lockWait, underLockClient, underLockCommit, keyedBatches } = h.meter;
      send({ type: 'ran', latencies, lockHeld, lockWait, underLockClient, underLockCommit, keyedBatches });
    } else if (m.type === 'heard') {
      // Every `done` the other host answered, once this host has heard of it (its events, never a timer).
      await new Promise<void>((resolve) => {
        const all = () => m.tasks.every((t) => heardAt.has(t));
        if (all()) return resolve();
        const sub = h.board.onEvent(() => {
          if (!all()) return;
          sub.dispose();
          resolve();
        });
      });
      send({ type: 'heard', at: m.tasks.map((t) => [t, heardAt.get(t) as number]) });
    } else {
      // Leaves the board as a host that stops does (its claims ended), so the main thread's host is not left
      // ending them host-lost when this one's lease lapses.
      for (const a of agents) await h.board.run((e) => ({ ok: true, value: e.releaseAllHeldBy(a.id, 'host-stopped') }));
      await h.board.close();
      await h.pool.end();
      send({ type: 'closed' });
      port.close();
    }
  })();
});
send({ type: 'ready' });
