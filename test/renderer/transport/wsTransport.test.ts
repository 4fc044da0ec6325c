import { describe, expect, it } from 'vitest';
import { takeLinkCode, tradeLinkCode, wsUrlFor } from '../../../src-renderer/transport/linkCode.js';
import { toWindowError } from '../../../src-renderer/transport/types.js';
import { backoffDelay, LOST_ANSWER_RESEND_MS, ReconnectConstants, WsTransport, type SocketLike } from '../../../src-renderer/transport/wsTransport.js';
import { paneFrameHead } from '../../../src-shared/protocol/paneFrame.js';

class FakeSocket implements SocketLike {
  readyState = 0;
  binaryType = 'blob';
  sent: any[] = [];
  closed = false;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(): void {
    this.closed = true;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  drop(): void {
    this.readyState = 3;
    this.onclose?.({});
  }
  reply(m: unknown): void {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
  /** A binary message, as the browser hands it over with binaryType 'arraybuffer'. */
  replyBytes(bytes: Uint8Array): void {
    this.onmessage?.({ data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
  }
}

function setup(ready?: Promise<unknown>) {
  const sockets: FakeSocket[] = [];
  const timers: Array<{ f: () => void; ms: number }> = [];
  const t = new WsTransport({
    url: 'ws://127.0.0.1:4000/ws',
    ready,
    createSocket: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    setTimeout: (f, ms) => timers.push({ f, ms }),
    clearTimeout: () => undefined,
    random: () => 0.5,
  });
  const states: string[] = [];
  t.onState((s) => states.push(s));
  return { t, sockets, timers, states, last: () => sockets[sockets.length - 1]! };
}

describe('WsTransport', () => {
  it('answers calls by id and delivers pushes', async () => {
    const { t, last, states } = setup();
    expect(t.state).toBe('connecting');
    last().open();
    expect(states).toEqual(['connected']);
    const pushes: unknown[] = [];
    t.subscribe((p) => pushes.push(p));
    const a = t.call('threads.list', {});
    const b = t.call('task.approve', { key: '0123456789abcdef', taskId: 'T-1' });
    const [m1, m2] = last().sent;
    expect(m1).toEqual({ id: 1, method: 'threads.list', params: {} });
    last().reply({ push: { type: 'notify', title: 't', body: 'b' } });
    last().reply({ id: m2.id, ok: false, error: { code: 'bad-state', message: 'T-1 is open' } });
    last().reply({ id: m1.id, ok: true, value: [] });
    await expect(a).resolves.toEqual([]);
    await expect(b).rejects.toMatchObject({ code: 'bad-state', message: 'T-1 is open' });
    expect(pushes).toEqual([{ type: 'notify', title: 't', body: 'b' }]);
  });

  it('reads pane output from binary messages as pane-data pushes, in order with the JSON ones, and drops what is not one', () => {
    const { t, last } = setup();
    last().open();
    expect(last().binaryType).toBe('arraybuffer');
    const pushes: unknown[] = [];
    t.subscribe((p) => pushes.push(p));
    const pane = (agentId: string, text: string) => {
      const head = paneFrameHead('0123456789abcdef', agentId);
      const body = new TextEncoder().encode(text);
      const m = new Uint8Array(head.length + body.length);
      m.set(head);
      m.set(body, head.length);
      return m;
    };
    const errors: unknown[] = [];
    const logged = console.error;
    console.error = (...args: unknown[]) => void errors.push(args.join(' '));
    try {
      last().replyBytes(pane('a1', 'café \x1b[1m🙂'));
      last().reply({ push: { type: 'notify', title: 't', body: 'b' } });
      last().replyBytes(new Uint8Array([9, 9, 9]));
      last().replyBytes(pane('a2', ''));
    } finally {
      console.error = logged;
    }
    expect(pushes).toEqual([
      { type: 'pane-data', key: '0123456789abcdef', agentId: 'a1', data: 'café \x1b[1m🙂' },
      { type: 'notify', title: 't', body: 'b' },
      { type: 'pane-data', key: '0123456789abcdef', agentId: 'a2', data: '' },
    ]);
    expect(errors).toEqual([expect.stringMatching(/dropped a message from the host: .*no pane output \(kind 9\)/)]);
  });

  it('fails calls at once while disconnected, and in-flight calls when the socket closes', async () => {
    const { t, last } = setup();
    await expect(t.call('threads.list', {})).rejects.toMatchObject({ code: 'disconnected' });
    last().open();
    const p = t.call('threads.list', {});
    last().drop();
    await expect(p).rejects.toMatchObject({ code: 'disconnected' });
    // a connection that was up is gone: the page says the host stopped, not that it is still connecting
    expect(t.state).toBe('host-stopped');
  });

  it('reconnects with growing, capped backoff and reports each reconnect', () => {
    const { sockets, timers, states, last } = setup();
    last().drop(); // never opened
    last(); // same socket
    expect(timers.map((x) => x.ms)).toEqual([ReconnectConstants.initialDelayMs]);
    for (let i = 0; i < 8; i++) {
      timers.shift()!.f();
      last().drop();
    }
    expect(timers[0]!.ms).toBe(ReconnectConstants.maxDelayMs);
    timers.shift()!.f();
    last().open();
    expect(states.filter((s) => s === 'connected')).toHaveLength(1);
    last().drop();
    expect(timers.at(-1)!.ms).toBe(ReconnectConstants.initialDelayMs); // reset after a good connection
    timers.shift()!.f();
    last().open();
    expect(states).toEqual(['connected', 'host-stopped', 'connected']);
    expect(sockets.every((s) => s.url === 'ws://127.0.0.1:4000/ws')).toBe(true);
  });

  it('opens its first socket only once `ready` settles, resolved or rejected', async () => {
    for (const outcome of ['resolve', 'reject'] as const) {
      let settle!: () => void;
      const ready = new Promise<void>((resolve, reject) => (settle = outcome === 'resolve' ? resolve : () => reject(new Error('refused'))));
      const { sockets } = setup(ready);
      expect(sockets).toHaveLength(0);
      settle();
      await ready.catch(() => undefined);
      await Promise.resolve();
      expect(sockets).toHaveLength(1);
    }
  });

  it('asks the host why a socket did not open: a refused cookie, a spent link, a made-up link, a host not there', async () => {
    const answers: string[] = [];
    const probed = () => new Promise((r) => setTimeout(r, 0));
    for (const [answer, traded, want] of [
      ['refused', 'traded', 'refused'],
      ['refused', 'spent', 'link-spent'],
      ['refused', 'unknown', 'link-unknown'],
      ['refused', 'failed', 'refused'],
      ['unreachable', 'traded', 'host-stopped'],
      ['unavailable', 'traded', 'host-stopped'],
      ['admitted', 'traded', 'connecting'],
    ] as const) {
      const sockets: FakeSocket[] = [];
      const t = new WsTransport({
        url: 'ws://127.0.0.1:4000/ws',
        ready: Promise.resolve(traded),
        probe: async () => (answers.push(answer), answer),
        createSocket: (url) => {
          const s = new FakeSocket(url);
          sockets.push(s);
          return s;
        },
        setTimeout: () => undefined,
        clearTimeout: () => undefined,
      });
      await probed();
      sockets[0]!.drop();
      await probed();
      expect(t.state).toBe(want);
    }
    expect(answers).toHaveLength(7);
  });

  it('a late probe answer about an earlier attempt does not undo a connection', async () => {
    let answer!: (r: 'refused') => void;
    const sockets: FakeSocket[] = [];
    const timers: Array<() => void> = [];
    const t = new WsTransport({
      url: 'ws://127.0.0.1:4000/ws',
      probe: () => new Promise((r) => (answer = r)),
      createSocket: (url) => {
        const s = new FakeSocket(url);
        sockets.push(s);
        return s;
      },
      setTimeout: (f) => timers.push(f),
      clearTimeout: () => undefined,
    });
    sockets[0]!.drop();
    timers.shift()!();
    sockets[1]!.open();
    answer('refused');
    await new Promise((r) => setTimeout(r, 0));
    expect(t.state).toBe('connected');
  });

  it('dispose closes the socket and stops reconnecting', () => {
    const { t, last, timers } = setup();
    last().open();
    t.dispose();
    expect(last().closed).toBe(true);
    expect(timers).toHaveLength(0);
  });

  it('backoff has jitter within ±20%', () => {
    expect(backoffDelay(0, () => 0)).toBe(200);
    expect(backoffDelay(0, () => 1)).toBe(300);
    expect(backoffDelay(20, () => 0.5)).toBe(1_000);
  });

  describe('a board write whose answer was lost (issue 31: the window per action)', () => {
    const add = { key: '0123456789abcdef', title: 'once', writeKey: 'k-1' };
    /** Lets the transport's awaits run: a resend follows the reconnect by a few promise turns. */
    const turns = async () => {
      for (let i = 0; i < 10; i++) await Promise.resolve();
    };

    it('is sent again with the same key once connected again, and answered there', async () => {
      const { t, timers, last } = setup();
      last().open();
      const p = t.call('task.add', add);
      const first = last();
      expect(first.sent).toEqual([{ id: 1, method: 'task.add', params: add }]);
      first.drop(); // the host may have taken it: its answer is gone with the connection
      await turns();
      timers.find((x) => x.ms === ReconnectConstants.initialDelayMs)!.f();
      last().open();
      await turns();
      expect(last()).not.toBe(first);
      expect(last().sent).toEqual([{ id: 2, method: 'task.add', params: add }]);
      last().reply({ id: 2, ok: true, value: { id: 'T-1', title: 'once' } });
      await expect(p).resolves.toEqual({ id: 'T-1', title: 'once' });
    });

    it('a write without a key, and one made while disconnected, fail as before: nothing is sent later', async () => {
      const { t, timers, last } = setup();
      await expect(t.call('task.add', add)).rejects.toMatchObject({ code: 'disconnected' });
      last().open();
      const unkeyed = t.call('task.add', { key: add.key, title: 'unkeyed' });
      last().drop();
      await expect(unkeyed).rejects.toMatchObject({ code: 'disconnected' });
      timers.shift()!.f();
      last().open();
      await turns();
      expect(last().sent).toEqual([]);
    });

    it('gives up when no connection comes back within the bound, and when the window closes', async () => {
      const { t, timers, last } = setup();
      last().open();
      const p = t.call('task.add', add);
      last().drop();
      await turns();
      const bound = timers.find((x) => x.ms === LOST_ANSWER_RESEND_MS)!;
      bound.f();
      await expect(p).rejects.toMatchObject({ code: 'disconnected' });
      timers.find((x) => x.ms === ReconnectConstants.initialDelayMs)!.f();
      last().open();
      await turns();
      expect(last().sent).toEqual([]);

      const q = t.call('task.add', { ...add, writeKey: 'k-2' });
      last().drop();
      await turns();
      t.dispose();
      await expect(q).rejects.toMatchObject({ code: 'disconnected' });
    });

    it('the bound runs from the first loss: a resend lost again waits only for what is left of it', async () => {
      const { t, timers, last } = setup();
      last().open();
      const p = t.call('task.add', add);
      last().drop();
      await turns();
      const reconnect = () => timers.filter((x) => x.ms < LOST_ANSWER_RESEND_MS).at(-1)!.f();
      reconnect();
      last().open();
      await turns();
      expect(last().sent).toHaveLength(1);
      last().drop();
      await turns();
      expect(timers.filter((x) => x.ms === LOST_ANSWER_RESEND_MS)).toHaveLength(1);
      timers.find((x) => x.ms === LOST_ANSWER_RESEND_MS)!.f();
      await expect(p).rejects.toMatchObject({ code: 'disconnected' });
    });
  });
});

describe('serve-mode link code', () => {
  it('takes the code from the fragment and strips only it from the address bar', () => {
    let replaced = '';
    expect(takeLinkCode('http://127.0.0.1:4000/?debug=1&thread=ab#code=s3cr3t&x=1', (u) => (replaced = u))).toBe('s3cr3t');
    expect(replaced).toBe('/?debug=1&thread=ab#x=1');
    expect(takeLinkCode('http://127.0.0.1:4000/#code=s3cr3t', (u) => (replaced = u))).toBe('s3cr3t');
    expect(replaced).toBe('/');
    // the reload: no code any more, and the address is left alone
    replaced = 'untouched';
    expect(takeLinkCode('http://127.0.0.1:4000/?debug=1', (u) => (replaced = u))).toBeNull();
    expect(replaced).toBe('untouched');
  });

  it('trades the code in a POST body, and says whether a refused code was spent or never given out', async () => {
    const posted: Array<[string, string]> = [];
    expect(await tradeLinkCode('c0de', async (path, body) => (posted.push([path, body]), { ok: true, status: 204 }))).toBe('traded');
    expect(posted).toEqual([['/session', 'c0de']]);
    expect(await tradeLinkCode('spent', async () => ({ ok: false, status: 410 }))).toBe('spent');
    expect(await tradeLinkCode('made-up', async () => ({ ok: false, status: 403 }))).toBe('unknown');
    expect(await tradeLinkCode('c0de', async () => ({ ok: false, status: 500 }))).toBe('failed');
    expect(await tradeLinkCode('c0de', () => Promise.reject(new Error('offline')))).toBe('failed');
  });

  it('builds the socket URL on the page host, with nothing secret in it', () => {
    expect(wsUrlFor({ protocol: 'http:', host: '127.0.0.1:4000' })).toBe('ws://127.0.0.1:4000/ws');
    expect(wsUrlFor({ protocol: 'https:', host: 'x' })).toBe('wss://x/ws');
  });

  it('turns any thrown thing into code + message', () => {
    expect(toWindowError(Object.assign(new Error('nope'), { code: 'lapsed' }))).toEqual({ code: 'lapsed', message: 'nope' });
    expect(toWindowError(new Error("Error invoking remote method 'forkbench:call': Error: boom"))).toEqual({ code: 'error', message: 'boom' });
    expect(toWindowError('x')).toEqual({ code: 'error', message: 'x' });
  });
});
