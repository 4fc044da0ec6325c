import { createElement, type ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { createStore } from 'zustand/vanilla';
import { describe, expect, it } from 'vitest';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { Task } from '../../../src-shared/board/model.js';
import { emptyBoard, NEW_TASK } from '../../../src-shared/board/reducer.js';
import { NO_TOKENS, type CostBook, type SpendFigures, type TaskCost } from '../../../src-shared/usage/usage.js';
import { ServicesContext, type AppServices } from '../../../src-renderer/state/hooks.js';
import type { AppState } from '../../../src-renderer/state/controller.js';
import { AgentSpend } from '../../../src-renderer/components/AgentSpend.js';
import { CostFigure } from '../../../src-renderer/components/CostFigure.js';
import { TaskCostSection } from '../../../src-renderer/components/TaskCost.js';

/**
 * The cost views as React draws them from a board (issue 47): the card's figure, the details panel's section and
 * the agent list's line, each reading the window's store as the page does. Drawn to markup on the server side of
 * react-dom: the words, figures and test ids the e2e reads, without a browser.
 */
const spend = (usd: number, input: number, output: number, turns: number, unpriced = 0): SpendFigures => ({ tokens: { ...NO_TOKENS, input, output }, usd, unpriced, turns });

function render(el: ReactElement, tasks: Task[], costs?: CostBook): string {
  const board = emptyBoard('t');
  for (const t of tasks) board.tasks.set(t.id, t);
  if (costs) board.costs = costs;
  const store = createStore<AppState>(() => ({ board, boardVersion: 1 }) as unknown as AppState);
  const services = { controller: { store, agentName: (id: string) => (id === 'a1' ? 'shell 1' : id) } } as unknown as AppServices;
  return renderToStaticMarkup(createElement(ServicesContext.Provider, { value: services }, el));
}

const text = (html: string, testId: string) => new RegExp(`data-testid="${testId}"[^>]*>([^<]*)<`).exec(html)?.[1];

const cost: TaskCost = { ...spend(0.0375, 2200, 540, 2), byAgent: { a1: { ...spend(0.0375, 2200, 540, 2), lastActed: 1 } }, spend: [[0, 0.0315, 1540], [5000, 0.0375, 2740]] };
const task: Task = { ...NEW_TASK, id: 'T-1', title: 'Port the parser', state: 'claimed', createdAt: 0, attempts: 1, cost };

describe('the cost views', () => {
  it('the card: the money, its reading as the label, the last-acted mark', () => {
    const html = render(createElement(CostFigure, { taskId: 'T-1', testId: 'card-cost-T-1' }), [task]);
    expect(html).toContain('aria-label="spent $0.0375; 2,740 tokens in 2 turns; 1 turn counted here as the task its agent last acted on, while it held several"');
    expect(html).toMatch(/>\$0\.0375<span class="cost-last-acted" data-testid="card-cost-T-1-last-acted" aria-hidden="true">\*<\/span><\/span>$/);
    expect(render(createElement(CostFigure, { taskId: 'T-1', testId: 'x' }), [{ ...task, cost: null }])).toBe('');
  });

  it('the details panel: money, tokens by kind, per agent, the sparkline and the claims its history tells', () => {
    const events = [{ seq: 1, at: 1_000, mono: 0, kind: 'grant', taskId: 'T-1', agentId: 'a1', token: 1, deadline: 0, by: 'a1' }] as BoardEvent[];
    const html = render(createElement(TaskCostSection, { taskId: 'T-1', events, now: 61_000 }), [task]);
    expect(text(html, 'details-cost-spent')).toBe('$0.0375');
    expect(text(html, 'details-cost-input')).toBe('2,200');
    expect(text(html, 'details-cost-output')).toBe('540');
    expect(text(html, 'details-cost-agent-spent-a1')).toBe('$0.0375');
    expect(html).toContain('<th scope="row">shell 1</th>');
    expect(html).toContain('aria-label="Spend over 5 s: from $0.0315 to $0.0375 in 2 steps"');
    expect(text(html, 'details-cost-held')).toBe('1 min worked under claims');
    expect(text(html, 'details-cost-claim-count')).toBe('1 claim');
  });

  it('the details panel of a task nothing was spent on says so', () => {
    const html = render(createElement(TaskCostSection, { taskId: 'T-1', events: null, now: 0 }), [{ ...task, cost: null }]);
    expect(text(html, 'details-cost-none')).toBe('Nothing spent on T-1 yet.');
  });

  it('the agent list: its spend, its overhead apart, and the headroom its CLI reports', () => {
    const costs: CostBook = {
      thread: spend(0.0385, 2210, 545, 3),
      agents: { a1: { ...spend(0.0385, 2210, 545, 3), profile: 'shell', overhead: spend(0.001, 10, 5, 1), limits: [{ window: 'five_hour', usedPct: 85, resetsAt: 3_600_000 }] } },
      profiles: {},
      days: {},
    };
    const html = render(createElement(AgentSpend, { agentId: 'a1', now: 0 }), [task], costs);
    expect(text(html, 'agent-spend-total-a1')).toBe('spent $0.0385');
    expect(text(html, 'agent-spend-overhead-a1')).toBe('overhead $0.001');
    expect(html).toContain('class="agent-headroom low" data-testid="agent-headroom-a1-five_hour">five hour: 15% left, resets in 1 h</span>');
    expect(render(createElement(AgentSpend, { agentId: 'a2', now: 0 }), [task], costs)).toBe('');
  });
});
