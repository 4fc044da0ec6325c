import { afterEach, describe, expect, it } from 'vitest';
import { Limits } from '../../../src-shared/board/limits.js';
import type { WindowMethod, WindowParams, WindowPush, WindowResult } from '../../../src-shared/protocol/windowApi.js';
import type { ThreadManager } from '../../../src-main/window/threadManager.js';
import { WindowRouter } from '../../../src-main/window/windowRouter.js';
import { AppController } from '../../../src-renderer/state/controller.js';
import { HostCallError, type Transport } from '../../../src-renderer/transport/types.js';
import { nextEvent } from '../../helpers/events.js';
import { managerFixture } from '../../helpers/hosts.js';

/**
 * Each agent's claims are the host's: the page draws `AgentInfo.claims` from the agent list the host pushes,
 * and computes none of its own. So the host must push that list after every change of who holds what, or a
 * tab shows claims that are gone (or misses new ones). Here the page's real controller hears a real host
 * (ThreadManager's pushes, WindowRouter's answers, agents in real ptys), and after each change its tabs are
 * compared with the board's own answer.
 */

/** The page's transport, wired straight to the host's router and pushes (what Electron's IPC and serve's
 *  WebSocket carry, without the wire). */
class HostTransport implements Transport {
  readonly kind = 'websocket' as const;
  readonly state = 'connected' as const;
  constructor(
    private readonly router: WindowRouter,
    private readonly threads: ThreadManager,
  ) {}

  async call<M extends WindowMethod>(method: M, params: WindowParams<M>): Promise<WindowResult<M>> {
    const r = await this.router.call(method, params, 'claims-test-window');
    if (!r.ok) throw new HostCallError(r.error.code, r.error.message);
    return r.value as WindowResult<M>;
  }

  subscribe(listener: (push: WindowPush) => void): () => void {
    const sub = this.threads.onPush.event(listener);
    return () => sub.dispose();
  }

  onState(): () => void {
    return () => undefined;
  }

  dispose(): void {}
}

const fixture = managerFixture('claims');
const pages: AppController[] = [];
afterEach(async () => {
  for (const p of pages.splice(0)) p.dispose();
  await fixture.cleanup();
});

async function pageOnRealHost() {
  const { threads, folder } = fixture.make();
  const page = new AppController(new HostTransport(new WindowRouter(threads), threads));
  pages.push(page);
  page.start();
  expect(await page.openFolder(folder)).toBe(true);
  const host = threads.get(page.state.activeKey as string);
  if (!host) throw new Error('the Thread did not open');
  return { page, host };
}

describe("the page's tabs show the host's claims", () => {
  it('after a grant, a drag, a renewal, a release, done and approval, a lapse and a kill -9', async () => {
    const { page, host } = await pageOnRealHost();
    for (const title of ['parser', 'lexer', 'docs']) await host.board.run((e) => e.addTask({ title }));
    const a = (await page.launch('custom', 'exec sleep 600'))?.id as string;
    const b = (await page.launch('custom', 'exec sleep 600'))?.id as string;
    expect(a && b).toBeTruthy();
    // What the page draws for each agent, beside the board's word (in the window's order, by number).
    const tabs = () => ({ a: page.state.agents[a]?.claims, b: page.state.agents[b]?.claims });
    const truth = () => ({ a: host.board.engine.claimsOf(a).sort(), b: host.board.engine.claimsOf(b).sort() });

    // Claimed in the other order: the host sends them in the window's order.
    expect((await host.board.run((e) => e.claim(a, 'T-3'))).ok).toBe(true);
    expect((await host.board.run((e) => e.claim(a, 'T-1'))).ok).toBe(true);
    expect(tabs()).toEqual({ a: ['T-1', 'T-3'], b: [] });

    // A drag onto B's tab, as the page does it.
    expect(await page.actions.assignTask('T-3', b)).toBe(true);
    expect(tabs()).toEqual({ a: ['T-1'], b: ['T-3'] });

    // A renewal moves no claim: B's tab keeps its very object (no re-render).
    const bTab = page.state.agents[b];
    expect((await host.board.run((e) => e.renew(b, 'T-3'))).ok).toBe(true);
    expect(page.state.agents[b]).toBe(bTab);

    expect(await page.actions.releaseTask('T-1')).toBe(true);
    expect(tabs()).toEqual({ a: [], b: ['T-3'] });

    // Done keeps the claim while the work waits for review; approval ends it.
    expect((await host.board.run((e) => e.done(b, 'T-3'))).ok).toBe(true);
    expect(tabs()).toEqual({ a: [], b: ['T-3'] });
    expect(await page.actions.approveTask('T-3')).toBe(true);
    expect(tabs()).toEqual({ a: [], b: [] });

    // A lapse: nothing renews A's claim (the liveness loop is off), so the board's own timer ends it.
    await host.board.run((e) => e.setSettings({ leaseMs: Limits.minLeaseMs }));
    expect((await host.board.run((e) => e.claim(a, 'T-2'))).ok).toBe(true);
    expect(tabs()).toEqual({ a: ['T-2'], b: [] });
    const lapsed = nextEvent(host, (e) => e.kind === 'claim-ended' && e.reason === 'lapsed', 10_000, 'the lapse');
    await lapsed;
    expect(tabs()).toEqual({ a: [], b: [] });

    // The holder's process dies: its claim ends at once, and its tab says so.
    expect((await host.board.run((e) => e.claim(b, 'T-1'))).ok).toBe(true);
    expect(tabs()).toEqual({ a: [], b: ['T-1'] });
    const released = nextEvent(host, (e) => e.kind === 'claim-ended' && e.agentId === b, 10_000, "B's claim ending");
    process.kill(page.state.agents[b]?.pid as number, 'SIGKILL');
    await released;
    expect(tabs()).toEqual({ a: [], b: [] });
    expect(tabs()).toEqual(truth());
  });
});
