/**
 * Prompt on screen → the agent's state in the window (issue 19: p99 ≤ 250 ms). A pane's program waits for
 * a key, then prints a prompt, the way a CLI stops to ask. The figure runs from the prompt on the window's
 * screen (its output pushed to the window; in the page, parsed by the pane's xterm) to the agent's state
 * turning needs-input there (pushed; on the tab). The prompt also carries the pane's clock, read just
 * before it printed (`date`; one machine, one wall clock), for the whole way from the program. Enter
 * answers the prompt (the state goes back to working) before the next round.
 *
 * Three ways a prompt is known, each with its own pane:
 * - `terminal`: an OSC 9 notification with the prompt (any program can send one; the custom profile
 *   reads them);
 * - `screen`: only the prompt's text, matched on the host's mirror of the screen (the aider profile's
 *   "(Y)es/(N)o", from a stand-in `aider` on serve's PATH: see promptEnv; the last resort for a CLI without
 *   hooks, read after the output settles);
 * - `hook`: the program runs `forkbench status needs-input` as a CLI's hook does (a node process starts).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Page } from 'playwright-core';
import type { WindowClient } from '../e2e/windowClient.js';
import type { ProfileIdShared as ProfileId } from '../src-shared/agents/profileIds.js';
import { type BenchWindow, closeInPage, p, verdict } from './pageKit.js';
import type { Row } from './table.js';

export type PromptPath = 'terminal' | 'screen' | 'hook';

/** Rounds per path: p99 of 30 is their worst; the issue asks for ≥ 30. */
export const STATE_ROUNDS = 30;
/** Issue 19's goal: a person glancing at the tabs is told within a quarter second of the prompt. */
const GOAL_P99_MS = 250;

/** The prompt's time (ms since the epoch, from `date` in the pane) as it travels in the prompt's text. */
const STAMP = /\[t=(\d{13})\]/;

/**
 * The pane's program: prints `ready`, then on each `x` clears the screen (so the screen path sees one
 * prompt, not the answered ones above it) and asks. Keys other than `x` (the person's Enter) are read and
 * dropped. `date` is read before the prompt is written, so the figure includes the write.
 */
function promptProgram(path: PromptPath): string {
  const ask =
    path === 'terminal'
      ? `printf '\\033[2J\\033[HProceed? [t=%s]\\033]9;Proceed? [t=%s]\\007' $t $t`
      : path === 'screen'
        ? `printf '\\033[2J\\033[HApply the edit? [t=%s] (Y)es/(N)o [Yes]: ' $t`
        : `printf '\\033[2J\\033[HProceed? [t=%s] ' $t; forkbench status needs-input --text "Proceed? [t=$t]" >/dev/null`;
  return `stty -echo -icanon min 1; printf 'ready\\n'; while :; do c=$(head -c1); [ "$c" = x ] || continue; t=$(date +%s%3N); ${ask}; done`;
}

/** The custom profile reads OSC 9; the aider profile's screen matcher knows "(Y)es/(N)o". */
const PROFILE: Record<PromptPath, ProfileId> = { terminal: 'custom', screen: 'aider', hook: 'custom' };

/**
 * For serve's environment: a folder with a stand-in `aider` (the screen path's program; the aider profile
 * runs no command but its own, and takes it from PATH) put first on PATH. Disposed with its folder.
 */
export function promptEnv(): { env: NodeJS.ProcessEnv; dispose(): void } {
  const dir = fs.mkdtempSync(join(tmpdir(), 'forkbench-bench-aider-'));
  fs.writeFileSync(join(dir, 'aider'), `#!/bin/sh\n# forkbench bench: a prompt printed the way aider asks; its arguments are aider's and unused\n${promptProgram('screen')}\n`, { mode: 0o755 });
  return { env: { PATH: `${dir}${delimiter}${process.env.PATH ?? ''}` }, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

const stampOf = (text: string | null | undefined): number | null => {
  const m = STAMP.exec(text ?? '');
  return m ? Number(m[1]) : null;
};

interface Rounds {
  /** From the prompt on the window's screen: its output pushed to the window, or parsed by the page's pane. */
  fromScreen: number[];
  /** From the pane's clock read just before it printed the prompt: the whole way, the pane's own
   *  scheduling on a loaded machine included. */
  fromPane: number[];
}

function rowsOf(where: 'over the WebSocket' | 'in the page', path: PromptPath, r: Rounds, rows: Row[], gated: boolean): void {
  const how = { terminal: 'OSC 9 notification', screen: "prompt text matched on the host's screen mirror", hook: '`forkbench status needs-input` (a CLI start)' }[path];
  const onScreen = where === 'in the page' ? "parsed by the page's pane" : 'pushed to the window';
  const state = where === 'in the page' ? "needs-input on the tab (data-state)" : 'needs-input pushed to the window';
  rows.push({
    name: `prompt → state ${where}, ${path} p50`,
    value: p(r.fromScreen, 50),
    unit: 'ms',
    note: `${how}: the prompt ${onScreen} → ${state}, ${r.fromScreen.length} rounds; from the pane's clock before it printed: p50 ${p(r.fromPane, 50).toFixed(0)} ms, p99 ${p(r.fromPane, 99).toFixed(0)} ms`,
  });
  rows.push({
    name: `prompt → state ${where}, ${path} p99`,
    value: p(r.fromScreen, 99),
    unit: 'ms',
    note: gated ? `goal ≤ ${GOAL_P99_MS} ${verdict(p(r.fromScreen, 99) <= GOAL_P99_MS)}` : `max ${Math.max(...r.fromScreen).toFixed(0)} ms; a CLI's hook process start, for comparison`,
  });
}

/** The agent's state as the window's last `agents` push said. */
function stateWatch(w: WindowClient, agentId: string): { next(want: string): Promise<{ text: string | null; at: number }>; stop(): void } {
  let waiter: { want: string; resolve: (v: { text: string | null; at: number }) => void } | null = null;
  const off = w.onPush((push) => {
    if (push.type !== 'agents' || !waiter) return;
    const a = push.agents.find((x) => x.id === agentId);
    if (a?.state?.state !== waiter.want) return;
    const wtr = waiter;
    waiter = null;
    wtr.resolve({ text: a.state.text, at: Date.now() });
  });
  return {
    next: (want) => new Promise((resolve) => (waiter = { want, resolve })),
    stop: () => void off(),
  };
}

async function withTimeout<T>(what: string, p: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`state bench: no ${what} in ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Launch a prompting pane over the WebSocket and wait for it to say ready (its screen is then attached). */
async function promptPane(w: WindowClient, key: string, path: PromptPath): Promise<string> {
  const profile = PROFILE[path];
  const a = await w.call('agent.launch', { key, profile, ...(profile === 'custom' ? { command: promptProgram(path) } : {}), cols: 120, rows: 30 });
  const end = Date.now() + 20_000;
  while (!(await w.call('agent.screen', { key, agentId: a.id })).includes('ready')) {
    if (Date.now() > end) throw new Error(`state bench: the ${path} pane never said ready`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return a.id;
}

/** Over the bare WebSocket, as the window hears it: each path, STATE_ROUNDS rounds. */
export async function stateOverSocket(w: WindowClient, key: string, rows: Row[]): Promise<void> {
  // A window hears a Thread's pushes once it has asked for its snapshot, as a page does on opening it.
  await w.call('thread.snapshot', { key });
  for (const path of ['terminal', 'screen', 'hook'] as const) {
    const id = await promptPane(w, key, path);
    const watch = stateWatch(w, id);
    const r: Rounds = { fromScreen: [], fromPane: [] };
    let shownAt = 0;
    const offData = w.onPush((push) => {
      if (push.type === 'pane-data' && push.agentId === id && !shownAt && STAMP.test(push.data)) shownAt = Date.now();
    });
    try {
      for (let i = 0; i < STATE_ROUNDS; i++) {
        shownAt = 0;
        const waiting = watch.next('needs-input');
        await w.call('agent.input', { key, agentId: id, data: 'x' });
        const got = await withTimeout(`needs-input from the ${path} pane`, waiting);
        const t = stampOf(got.text);
        if (t === null) throw new Error(`state bench: the ${path} prompt's text lost its time: ${JSON.stringify(got.text)}`);
        if (!shownAt) throw new Error(`state bench: the ${path} pane's state changed before its prompt reached the window`);
        r.fromScreen.push(got.at - shownAt);
        r.fromPane.push(got.at - t);
        const working = watch.next('working');
        await w.call('agent.input', { key, agentId: id, data: '\r' });
        await withTimeout('working after Enter', working);
      }
    } finally {
      offData();
      watch.stop();
      await w.call('agent.close', { key, agentId: id });
    }
    rowsOf('over the WebSocket', path, r, rows, path !== 'hook');
  }
}

/**
 * In the page: the terminal and screen paths, each pane launched over `w` and shown in the page (its tab
 * clicked), the key typed in the page, and the time taken when the tab's data-state turns needs-input.
 */
export async function stateInPage(page: Page, w: WindowClient, key: string, rows: Row[]): Promise<void> {
  for (const path of ['terminal', 'screen'] as const) {
    const id = await promptPane(w, key, path);
    await page.getByTestId(`agent-tab-${id}`).click();
    await page.getByTestId(`terminal-${id}`).locator('.xterm-rows').waitFor();
    await page.getByTestId(`terminal-${id}`).click();
    const r: Rounds = { fromScreen: [], fromPane: [] };
    for (let i = 0; i < STATE_ROUNDS; i++) {
      // Resolves once the tab says needs-input and the prompt (the only output after the key: the pane does
      // not echo) has been parsed by the pane's xterm, with when each happened.
      const seen = page.evaluate(
        ([a, want]) =>
          new Promise<{ at: number; shownAt: number; text: string }>((resolve) => {
            const w = window as unknown as BenchWindow;
            const tab = document.querySelector(`[data-testid="agent-tab-${a}"]`) as HTMLElement;
            let at = 0;
            let shownAt = 0;
            let text = '';
            const done = () => at && shownAt && resolve({ at, shownAt, text });
            const base = w.__forkbenchDebug.parsedChars(a);
            w.__forkbenchDebug.onParsed(a, (total) => {
              if (shownAt || total <= base) return;
              shownAt = Date.now();
              w.__forkbenchDebug.onParsed(a, null);
              done();
            });
            const check = () => {
              if (tab.getAttribute('data-state') !== want) return false;
              at = Date.now();
              text = document.querySelector(`[data-testid="agent-state-${a}"]`)?.getAttribute('title') ?? '';
              done();
              return true;
            };
            if (check()) return;
            const mo = new MutationObserver(() => check() && mo.disconnect());
            mo.observe(tab, { attributes: true, attributeFilter: ['data-state'] });
          }),
        [id, 'needs-input'] as const,
      );
      // The observer is in place before the key goes.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
      await page.keyboard.press('x');
      const got = await withTimeout(`needs-input on the ${path} pane's tab`, seen);
      const t = stampOf(got.text);
      if (t === null) throw new Error(`state bench: the tab's state text lost the prompt's time: ${JSON.stringify(got.text)}`);
      r.fromScreen.push(got.at - got.shownAt);
      r.fromPane.push(got.at - t);
      await page.keyboard.press('Enter');
      await withTimeout(
        'working after Enter',
        page.waitForFunction((a) => document.querySelector(`[data-testid="agent-tab-${a}"]`)?.getAttribute('data-state') === 'working', id, { polling: 'raf' }),
      );
    }
    await closeInPage(page, id);
    rowsOf('in the page', path, r, rows, true);
  }
}
