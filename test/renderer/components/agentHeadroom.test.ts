import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { createStore } from 'zustand/vanilla';
import { describe, expect, it } from 'vitest';
import { applyEvent, emptyBoard } from '../../../src-shared/board/reducer.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ServicesContext, type AppServices } from '../../../src-renderer/state/hooks.js';
import type { AppState } from '../../../src-renderer/state/controller.js';
import { AgentSpend } from '../../../src-renderer/components/AgentSpend.js';

/**
 * Issue 47: the rate-limit headroom a CLI reported, per agent in the agent list, from the board's own events
 * folded by the one reducer: a reading recorded alone (no turns spent) shows by itself, and one whose window has
 * reset since it was read says so instead of a figure that no longer holds. `now` is passed in: times are exact.
 */
const A = 'codex-1-aaaaaaaaaaaa';
const HOUR = 3_600_000;

function boardWith(events: BoardEvent[]) {
  const b = emptyBoard('t');
  for (const e of events) applyEvent(b, e);
  return b;
}

function render(events: BoardEvent[], now: number): string {
  const board = boardWith(events);
  const store = createStore<AppState>(() => ({ board, boardVersion: 1 }) as unknown as AppState);
  const services = { controller: { store, agentName: (id: string) => id } } as unknown as AppServices;
  return renderToStaticMarkup(createElement(ServicesContext.Provider, { value: services }, createElement(AgentSpend, { agentId: A, now })));
}

const reading = (seq: number, usedPct: number, resetsAt: number | null): BoardEvent =>
  ({ seq, at: seq * 1000, mono: seq * 1000, kind: 'usage', agentId: A, profile: 'codex', source: 'codex', turns: [], taskId: null, token: null, how: 'overhead', limits: [{ window: 'primary', usedPct, resetsAt }] }) as BoardEvent;

const created = { seq: 1, at: 0, mono: 0, kind: 'thread-created', threadId: 't', goal: '', settings: emptyBoard('t').settings } as BoardEvent;

describe("the agent list's headroom", () => {
  it('shows a reading recorded with no turns, and no spend beside it', () => {
    const html = render([created, reading(2, 85, 2 * HOUR)], HOUR);
    expect(html).toContain(`class="agent-headroom low" data-testid="agent-headroom-${A}-primary">primary: 15% left, resets in 1 h</span>`);
    expect(html).not.toContain('spent');
  });

  it('the latest reading replaces the one before', () => {
    const html = render([created, reading(2, 85, 2 * HOUR), reading(3, 20, 7 * HOUR)], HOUR);
    expect(html).toContain('>primary: 80% left, resets in 6 h</span>');
    expect(html).not.toContain('15% left');
  });

  it('a reading whose window has reset since says so, not its stale figure', () => {
    const html = render([created, reading(2, 95, 2 * HOUR)], 2 * HOUR + 25 * 60_000);
    expect(html).toContain(`class="agent-headroom stale" data-testid="agent-headroom-${A}-primary">primary: reset 25 min ago, not read since</span>`);
    expect(html).not.toContain('5% left');
  });
});
