import { describe, expect, it } from 'vitest';
import { standingOf, type StandingFacts } from '../../../src-shared/board/stateWords.js';

const facts = (f: Partial<StandingFacts>): StandingFacts => ({ status: 'running', state: 'working', holding: [], inReview: [], ...f });
const words = (f: Partial<StandingFacts>) => standingOf(facts(f)).words;

describe("an agent's standing: who owes whom, in one set of words", () => {
  it('at its prompt with a claim its lease runs: "idle holding", never the green idle of a finished turn', () => {
    expect(words({ state: 'idle', holding: ['T-2'] })).toBe('idle holding T-2');
    expect(words({ state: 'idle' })).toBe('idle');
  });

  it('work waiting for review is the person\'s turn, not a stall, unless the agent is busy with other work', () => {
    expect(standingOf(facts({ status: 'stalled', state: 'stalled', inReview: ['T-3'] })).kind).toBe('waiting-for-review');
    expect(words({ state: 'idle', inReview: ['T-3'] })).toBe('waiting for your review of T-3');
    expect(words({ state: 'working', inReview: ['T-3'], holding: ['T-4'] })).toBe('working');
    expect(words({ state: 'working', presumed: true, inReview: ['T-3'] })).toBe('waiting for your review of T-3');
  });

  it('a question comes first; gone is gone; after a restart it is unknown until seen', () => {
    expect(words({ state: 'needs-input', inReview: ['T-3'] })).toBe('waiting for you');
    expect(words({ status: 'exited', state: 'needs-input' })).toBe('exited');
    expect(words({ state: 'unknown', holding: ['T-1'] })).toBe('unknown');
    expect(words({ state: null })).toBe('unknown');
  });

  it('no progress is a stall only while it holds work', () => {
    expect(words({ status: 'stalled', state: 'stalled', holding: ['T-1'] })).toBe('stalled holding T-1');
    expect(words({ status: 'stalled', state: 'idle' })).toBe('idle');
    expect(words({ status: 'starting', state: 'working' })).toBe('starting');
  });
});
