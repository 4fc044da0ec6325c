import { describe, expect, it } from 'vitest';
import { containmentLine } from '../../../src-shared/agents/containment.js';
import { agentLabel, keepUnchanged, localIds, pickActive, runsElsewhere } from '../../../src-renderer/state/agentList.js';
import { agent } from '../../helpers/renderer.js';

describe("the window's agent list with another host's agents (shared board)", () => {
  const here = agent('a1', { name: 'shell 1' });
  const there = agent('b1', { name: 'shell 1', host: 'build-box', pid: null });

  it('tells an agent another host runs from one of its own, and has terminals only for its own', () => {
    expect(runsElsewhere(there)).toBe(true);
    expect(runsElsewhere(here)).toBe(false);
    expect(runsElsewhere(undefined)).toBe(false);
    expect(localIds([there, here, agent('a2')])).toEqual(['a1', 'a2']);
  });

  it('names it with its host, both hosts having a "shell 1"; a host name’s controls shown, never obeyed', () => {
    expect(agentLabel(here)).toBe('shell 1');
    expect(agentLabel(there)).toBe('shell 1 on build-box');
    expect(agentLabel(agent('b2', { name: 'shell 2', host: 'evil\u202ebox\x1b[2J' }))).toBe('shell 2 on evil\\u202ebox\\x1b[2J');
  });

  it('opens on a running agent of its own before another host’s, and keeps the one a person chose', () => {
    expect(pickActive(null, [there, here])).toBe('a1');
    expect(pickActive(null, [there, agent('a1', { status: 'exited' })])).toBe('a1');
    expect(pickActive(null, [there])).toBe('b1');
    expect(pickActive('b1', [there, here])).toBe('b1');
  });

  it('redraws a tab whose agent moved host (same name, same claims)', () => {
    const old = { b1: agent('b1', { name: 'shell 1', host: 'laptop', pid: null }) };
    const next = keepUnchanged(old, [there]);
    expect(next.b1).toBe(there);
    expect(keepUnchanged({ b1: there }, [{ ...there }]).b1).toBe(there);
  });
});

describe('whether an agent is contained, in its tab’s details (issue 43)', () => {
  it('one line of the host’s words; a tab whose agent was started again in another sandbox state is redrawn', () => {
    expect(containmentLine({ by: 'bwrap' })).toBe('Contained by bubblewrap');
    expect(containmentLine({ by: null, why: 'bubblewrap (bwrap) is not installed' })).toBe('Not contained: bubblewrap (bwrap) is not installed');
    const contained = agent('a1', { containment: { by: 'bwrap' } });
    const off = agent('a1', { containment: { by: null, why: "the sandbox is turned off for shell in this Thread's settings" } });
    expect(keepUnchanged({ a1: contained }, [off]).a1).toBe(off);
    expect(keepUnchanged({ a1: off }, [{ ...off, containment: { by: null, why: 'bubblewrap (bwrap) is not installed' } }]).a1).not.toBe(off);
    expect(keepUnchanged({ a1: contained }, [{ ...contained, containment: { by: 'bwrap' } }]).a1).toBe(contained);
  });
});
