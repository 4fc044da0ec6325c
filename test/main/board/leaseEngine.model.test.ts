import fc from 'fast-check';
import { describe, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ManualClock } from '../../../src-main/base/clock.js';
import { LeaseEngine } from '../../../src-main/board/leaseEngine.js';
import { checkInvariants, expectReplays, Model, planStep, setupSteps, stepArb, tasksOf, type GrantWatch, type Op } from '../../helpers/leaseModel.js';

/**
 * Model-based test: random sequences of agent writes, host signals, user actions and "advance the clock"
 * run against the engine and against a deliberately small reference model (test/helpers/leaseModel.ts, shared
 * with the stores' model test), with the safety properties checked after every step. fast-check shrinks a
 * failure to the shortest sequence that shows it.
 */

const RUNS = Number(process.env.FORKBENCH_MODEL_RUNS ?? 10_000);

interface Real extends GrantWatch {
  clock: ManualClock;
  engine: LeaseEngine;
  events: BoardEvent[];
}

class Step implements fc.Command<Model, Real> {
  constructor(readonly s: Op) {}
  check(): boolean {
    return true;
  }
  toString(): string {
    return JSON.stringify(this.s);
  }
  run(m: Model, r: Real): void {
    const before = tasksOf(r.engine);
    const eventsBefore = r.events.length;
    const plan = planStep(m, this.s);
    if (plan.advanceMs !== undefined) r.clock.advance(plan.advanceMs);
    plan.check(plan.call(r.engine), r.engine);
    checkInvariants(m, r.engine, r.clock.now(), before, r.events.slice(eventsBefore), r);
  }
}

describe('lease engine against a reference model', () => {
  it(`keeps the safety properties over ${RUNS} generated sequences`, () => {
    fc.assert(
      fc.property(fc.commands([stepArb.map((s) => new Step(s))], { maxCommands: 40 }), (cmds) => {
        const clock = new ManualClock();
        const engine = new LeaseEngine(clock);
        const events: BoardEvent[] = [];
        engine.onEvent((e) => events.push(e));
        engine.createThread('model');
        for (const setup of setupSteps) setup(engine);
        fc.modelRun(() => ({ model: new Model(), real: { clock, engine, events, maxGranted: 0 } }), cmds);
        // the log replays to the same board: what the journal and a window rebuild is what the engine holds
        expectReplays(events, engine.state);
      }),
      { numRuns: RUNS },
    );
  });
});
