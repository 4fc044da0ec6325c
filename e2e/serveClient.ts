import * as http from 'node:http';

/**
 * Requests to `forkbench serve` from a client that is not a browser (tests, benchmarks). Serve answers only
 * under its own host name (`forkbench-….localhost`), which browsers resolve to loopback themselves but this
 * machine's resolver need not: these connect to 127.0.0.1 and name the host in the Host header, as a
 * browser's request does.
 */

/** A printed link in serve's output: `Open http://forkbench-….localhost:PORT/#code=…`. */
export const PRINTED_LINK = /Open (http:\/\/[a-z0-9.-]+:\d+\/#code=[\w-]+)/g;

export interface ServeAddress {
  /** `forkbench-….localhost` */
  host: string;
  port: number;
}

/** The host and port a printed link names. */
export function addressOf(link: string): ServeAddress {
  const u = new URL(link);
  return { host: u.hostname, port: Number(u.port) };
}

/** `http://host:port`: the page's origin, as its requests send it. */
export const originOf = (a: ServeAddress) => `http://${a.host}:${a.port}`;

/** One request to serve over 127.0.0.1 with the server's own Host and (unless `headers` says otherwise) Origin. */
export function serveRequest(
  a: ServeAddress,
  o: { method?: string; path: string; body?: string; headers?: Record<string, string> },
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: a.port, method: o.method ?? 'GET', path: o.path, headers: { Host: `${a.host}:${a.port}`, Origin: originOf(a), ...o.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Trades a printed link's code as the page does: the Cookie header the browser would keep (`forkbench=…`). */
export async function tradeLink(link: string): Promise<{ cookie: string; credential: string }> {
  const a = addressOf(link);
  const traded = await serveRequest(a, { method: 'POST', path: '/session', body: new URL(link).hash.replace(/^#code=/, '') });
  const cookie = (String(traded.headers['set-cookie'] ?? '')).split(';')[0] ?? '';
  if (traded.status !== 204 || !cookie.includes('=')) throw new Error(`serve did not trade its link's code for a cookie: ${traded.status} ${traded.body}`);
  return { cookie, credential: cookie.slice(cookie.indexOf('=') + 1) };
}
