import type * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

export const LoopbackConstants = {
  /** Random ports tried for one free on both loopbacks: another program holding the IPv6 side of a port the
   *  IPv4 side had free is rare, so a few tries find one; more would only hide a machine where none is. */
  randomPortTries: 8,
} as const;

/** Errors that say this machine has no IPv6 loopback: then no one can listen there either. */
const NO_IPV6 = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT']);

const listen = (s: net.Server, port: number, host: string) =>
  new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => reject(err);
    s.once('error', failed);
    s.listen({ port, host, exclusive: true }, () => {
      s.off('error', failed);
      resolve();
    });
  });

const closed = (s: net.Server) => new Promise<void>((resolve) => s.close(() => resolve()));

/**
 * `server` listening on 127.0.0.1 and [::1] at the same port (`port`, or a random one free on both). A name
 * under `.localhost` resolves to both loopbacks, and browsers try [::1] first: a port held on 127.0.0.1 only
 * would let any local program listen on its [::1] side and be sent the page's requests, cookie and all.
 * Where the machine has no IPv6 loopback, 127.0.0.1 alone (nothing can listen on [::1] then). A given port
 * whose [::1] side is taken fails with EADDRINUSE, as a taken port does. The [::1] listener hands its
 * connections to `server`; it is returned to be closed with it.
 */
export async function listenOnLoopback(server: http.Server, port: number): Promise<{ port: number; v6: net.Server | null }> {
  for (let attempt = 0; ; attempt++) {
    await listen(server, port, '127.0.0.1');
    const bound = (server.address() as AddressInfo).port;
    const v6 = net.createServer((socket) => server.emit('connection', socket));
    try {
      await listen(v6, bound, '::1');
      return { port: bound, v6 };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (NO_IPV6.has(code)) return { port: bound, v6: null };
      await closed(server);
      if (port !== 0 || code !== 'EADDRINUSE' || attempt + 1 >= LoopbackConstants.randomPortTries) throw err;
    }
  }
}
