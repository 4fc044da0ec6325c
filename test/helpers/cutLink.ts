/**
 * A host's own link to the database, which a test can cut: a TCP listener on localhost that forwards each
 * connection to the server's Unix socket. `cut()` ends every connection it carries and refuses new ones (the
 * host's cable pulled, the database up for everyone else); `mend()` puts it back. One host behind it is cut off
 * while the others on the direct socket go on.
 */
import net from 'node:net';
import { join } from 'node:path';

export interface CutLink {
  /** A node-postgres URL to `database` through the link. */
  url(database: string): string;
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

/** The server's socket file in `socketDir`: PostgreSQL names it for its port, 5432 when none is set. */
const socketIn = (socketDir: string): string => join(socketDir, '.s.PGSQL.5432');

export async function openCutLink(socketDir: string): Promise<CutLink> {
  let isCut = false;
  const carried = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(socketIn(socketDir));
    const pair = [client, upstream];
    for (const s of pair) {
      carried.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        carried.delete(s);
        for (const other of pair) other.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    cut() {
      isCut = true;
      for (const s of carried) s.destroy();
    },
    mend() {
      isCut = false;
    },
    close() {
      isCut = true;
      for (const s of carried) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
