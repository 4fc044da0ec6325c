import * as fs from 'node:fs';
import { LivenessLoop, type LivenessSubject } from '../../src-main/agents/liveness.js';
import { Agent, secretDigestOf } from '../../src-main/agents/agent.js';
import { JournalBoard } from '../../src-main/board/journalBoard.js';
import type { LeaseEngine } from '../../src-main/board/leaseEngine.js';
import type { Result } from '../../src-shared/board/result.js';

/**
 * Scripted agents on a real board (journal on disk) and the real liveness loop, on a fake clock shared by
 * both (issue 34, item 5: the lease evidence). An agent's signs of progress are its pane's output and its
 * board calls, each set by the script at a moment of the fake clock; its process is sleeping and uses no
 * CPU, so nothing else counts as progress. Every loop round is run by hand, one per renew interval.
 */
export const CLAUDE = 'claude-1-0123456789ab';
export const CODEX = 'codex-1-ba9876543210';
const S = 1000;

export type LeaseScript = Awaited<ReturnType<typeof leaseScript>>;

/** The board in `dir` (made if missing) with a Claude Code and a Codex agent, alive, and the loop. */
export async function leaseScript(dir: string, threadId = 'evidence') {
  let t = 0;
  fs.mkdirSync(dir, { recursive: true });
  // A snapshot every 25 events: the evidence must come back from a snapshot, not only from a replay.
  const open = () => JournalBoard.open({ dir, threadId, goal: '', monotonic: () => t, compactEvery: 25 });
  let board = await open();
  const agents = new Map<string, LivenessSubject & { lastOutputAt: number }>();
  for (const [id, profile] of [
    [CLAUDE, 'claude'],
    [CODEX, 'codex'],
  ] as const) {
    agents.set(id, { agent: Agent.adopted({ id, name: id, profile, secretDigest: secretDigestOf('s'), pid: 4242 }, 0), lastOutputAt: 0, startedAt: 0 });
  }
  const loop = () => new LivenessLoop({ board, subjects: () => agents.values(), onStatus: () => undefined, now: () => t, readCpu: async () => ({ state: 'sleeping', cpuMs: 0, processes: 1 }) });
  let liveness = loop();
  const interval = board.state.settings.renewIntervalMs;
  return {
    get board() {
      return board;
    },
    now: () => t,
    /** Run the loop's rounds, one per renew interval, up to `until` (ms since the start), each followed by the
     *  board's sweep (the host's deadline timer). */
    async runTo(until: number) {
      while (t + interval <= until) {
        t += interval;
        await liveness.check();
        await board.apply((e) => e.sweep());
      }
    },
    /** The agent itself (its board calls, and the host's work for it). */
    agent(id: string): Agent {
      return (agents.get(id) as LivenessSubject).agent;
    },
    /** The agent prints to its pane now. */
    output(id: string) {
      (agents.get(id) as { lastOutputAt: number }).lastOutputAt = t;
    },
    /** The agent calls the board now (a board call is progress too). */
    call<T>(id: string, op: (e: LeaseEngine) => Result<T>) {
      agents.get(id)?.agent.calledBoard(t);
      return board.run(op);
    },
    /** The host restarts on the same folder. */
    async reopen() {
      liveness.stop();
      await board.close();
      board = await open();
      liveness = loop();
    },
    async close() {
      liveness.stop();
      await board.close();
    },
  };
}

function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what}: ${r.error.message}`);
  return r.value;
}

/**
 * The story the evidence test and the window's test both tell. Claude Code: three tasks, each worked in two
 * bursts with a 90 s silence between, said done and approved. Codex: three tasks, each claimed and then 150 s
 * of silence: the check stops renewing at 120 s of it, and the lease lapses 120 s after the last renewal. Its
 * process is alive all along: twice it comes back and writes (a commit through the fence with its token, a
 * note without one) and is refused; the third time it never does. Each of Codex's tasks then goes to Claude
 * Code, which finishes it with no more than 30 s of silence.
 */
export async function claudeQuietCodexReclaimed(s: LeaseScript): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const t0 = s.now();
    const id = must(await s.call(CLAUDE, (e) => e.addTask({ title: `claude task ${i}` }, CLAUDE)), 'add').id;
    must(await s.call(CLAUDE, (e) => e.claim(CLAUDE, id)), 'claim');
    s.output(CLAUDE);
    await s.runTo(t0 + 90 * S); // checks at 30, 60, 90 s of silence: each renews (inside the 120 s lease)
    s.output(CLAUDE);
    await s.runTo(t0 + 120 * S);
    must(await s.call(CLAUDE, (e) => e.done(CLAUDE, id)), 'done');
    await s.runTo(t0 + 180 * S); // in review: its silence now is waiting for a person, not a quiet gap
    must(await s.board.run((e) => e.approve(id)), 'approve');
  }
  const writesAfterLapse = [
    (id: string, token: number) => (e: LeaseEngine) => e.fence(CODEX, id, token),
    (id: string) => (e: LeaseEngine) => e.note(CODEX, id, 'back from the long build'),
    null,
  ];
  for (const write of writesAfterLapse) {
    const t0 = s.now();
    const id = must(await s.board.run((e) => e.addTask({ title: 'codex task' })), 'add').id;
    const token = must(await s.call(CODEX, (e) => e.claim(CODEX, id)), 'claim').token;
    s.output(CODEX);
    await s.runTo(t0 + 240 * S);
    const last = s.board.state.tasks.get(id)?.lastClaim;
    if (last?.agentId !== CODEX || last.reason !== 'lapsed') throw new Error(`${id}'s claim did not lapse: ${JSON.stringify(last)}`);
    if (write) {
      const refused = await s.call(CODEX, write(id, token));
      if (refused.ok || refused.error.code !== 'lapsed') throw new Error(`a write after the lapse was not refused as lapsed: ${JSON.stringify(refused)}`);
    }
    const t1 = s.now();
    must(await s.board.run((e) => e.assign(id, CLAUDE)), 'assign');
    s.output(CLAUDE);
    await s.runTo(t1 + 30 * S);
    s.output(CLAUDE);
    must(await s.call(CLAUDE, (e) => e.done(CLAUDE, id)), 'done');
    must(await s.board.run((e) => e.approve(id)), 'approve');
  }
}
