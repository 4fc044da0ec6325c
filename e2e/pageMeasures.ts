import type { Page } from 'playwright-core';

/**
 * Page-side measures shared by the big-board e2e test and the browser bench (bench/browserBench.ts): what a
 * board event costs the page, what the page waits for a `thread.snapshot`, and the long tasks meanwhile.
 */

/** Per board-event push: the page's handler plus the React work it queued (script), and with style and layout. */
export interface EventTiming {
  kind: string;
  script: number;
  layout: number;
}

/** A `thread.snapshot` call as the page made it: sent, and its answer handed to the page (performance.now()). */
export interface SnapshotCall {
  id: number;
  sent: number;
  answered?: number;
}

/**
 * Installed before the page's own scripts run (`page.addInitScript({ content: INSTRUMENT_SOCKET })`). Times
 * every board-event push the page takes: from the WebSocket message to the end of the microtasks it queued
 * (React renders a store change in a microtask), then once more after forcing style and layout, which the
 * next frame would have done anyway (`__eventTimings`). And every `thread.snapshot` the page calls: when it
 * was sent and when its answer reached the page's handler (`__snapshotCalls`). Plain JS in a string, so no
 * test runner's or tsx's transform can touch it.
 */
export const INSTRUMENT_SOCKET = `(() => {
  window.__eventTimings = [];
  window.__snapshotCalls = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.includes('"method":"thread.snapshot"')) {
      const m = /^\\{"id":(\\d+),/.exec(data);
      if (m) window.__snapshotCalls.push({ id: Number(m[1]), sent: performance.now() });
    }
    return send.call(this, data);
  };
  const desc = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage');
  Object.defineProperty(WebSocket.prototype, 'onmessage', {
    configurable: true,
    get: desc.get,
    set(fn) {
      if (!fn) return desc.set.call(this, fn);
      desc.set.call(this, function (ev) {
        const data = typeof ev.data === 'string' ? ev.data : '';
        const t0 = performance.now();
        const answer = data.startsWith('{"id":') ? /^\\{"id":(\\d+),/.exec(data) : null;
        if (answer) {
          const call = window.__snapshotCalls.find((c) => c.id === Number(answer[1]) && c.answered === undefined);
          if (call) call.answered = t0;
        }
        const m = data.startsWith('{"push":{"type":"board-event"') ? /"kind":"([a-z-]+)"/.exec(data) : null;
        fn.call(this, ev);
        if (!m) return;
        Promise.resolve().then(() => undefined).then(() => undefined).then(() => {
          const t1 = performance.now();
          document.body.getBoundingClientRect();
          window.__eventTimings.push({ kind: m[1], script: t1 - t0, layout: performance.now() - t0 });
        });
      });
    },
  });
})();`;

type Instrumented = { __eventTimings: EventTiming[]; __snapshotCalls: SnapshotCall[] };

/** Forget the board events timed so far. */
export function clearEventTimings(page: Page): Promise<void> {
  return page.evaluate(() => {
    (window as unknown as Instrumented).__eventTimings.length = 0;
  });
}

/** The claim events (grants and ends) timed since the last clear. */
export function claimEventTimings(page: Page): Promise<EventTiming[]> {
  return page.evaluate(() => (window as unknown as Instrumented).__eventTimings.filter((t) => t.kind === 'grant' || t.kind === 'claim-ended'));
}

/** The page's `thread.snapshot` calls since it was (re)loaded. */
export function snapshotCalls(page: Page): Promise<SnapshotCall[]> {
  return page.evaluate(() => (window as unknown as Instrumented).__snapshotCalls);
}

type LongTasks = { __longTasks: number[]; __longTaskObserver: PerformanceObserver };

/** Start collecting every long task (> 50 ms) the page's main thread has. */
export function startLongTasks(page: Page): Promise<void> {
  return page.evaluate(() => {
    const lt = window as unknown as LongTasks;
    lt.__longTasks = [];
    lt.__longTaskObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) lt.__longTasks.push(e.duration);
    });
    lt.__longTaskObserver.observe({ type: 'longtask' });
  });
}

/** Stop collecting and answer the long tasks' durations (ms) since `startLongTasks`. */
export async function stopLongTasks(page: Page): Promise<number[]> {
  // Long-task entries are delivered after the task; a frame later every one so far is in.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  return page.evaluate(() => {
    const lt = window as unknown as LongTasks;
    for (const e of lt.__longTaskObserver.takeRecords()) lt.__longTasks.push(e.duration);
    lt.__longTaskObserver.disconnect();
    return lt.__longTasks;
  });
}
