import { parseArgs } from 'node:util';
import { readKeyFrom } from './adoptionKey.js';
import { PtyHostServer } from './ptyHostServer.js';
import { forkbenchVersion } from './protocol.js';
import { redactSecrets } from '../base/redactSecrets.js';

/**
 * The pty host process: `node ptyHostMain.js --socket PATH --idle-ms N [--key-fd FD] [--version V]`. Started detached by a board host
 * (its own session, stdio to a log file), it holds the agents' ptys while board hosts come and go, and
 * stops once it has had no board host for the idle time, or none and no pane.
 */
/** Every line redacted (redactSecrets): the log names processes by their command lines, which may hold a URL's password. */
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ptyhost[${process.pid}]: ${redactSecrets(line)}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { socket: { type: 'string' }, 'idle-ms': { type: 'string' }, 'key-fd': { type: 'string' }, version: { type: 'string' } } });
  const idleMs = Number(values['idle-ms']);
  const keyFd = values['key-fd'] === undefined ? null : Number(values['key-fd']);
  if (!values.socket || !Number.isInteger(idleMs) || idleMs < 1 || (keyFd !== null && !Number.isInteger(keyFd))) {
    log('usage: ptyHostMain --socket PATH --idle-ms N [--key-fd FD] [--version V]');
    process.exit(2);
  }
  // Read and closed before any pane exists, so no agent's process ever inherits it.
  let key: Buffer | null = null;
  if (keyFd !== null) {
    try {
      key = await readKeyFrom(keyFd);
    } catch (err) {
      log(`cannot start: ${(err as Error).message}`);
      process.exit(3);
    }
  }
  // The Forkbench its launcher is (ptyHostLauncher.ts says it); this install's own when started by hand.
  const version = values.version || forkbenchVersion();
  let server: PtyHostServer;
  try {
    server = await PtyHostServer.listen({ socketPath: values.socket, version, idleMs, key, log, onStop: () => process.exit(0) });
  } catch (err) {
    log(`cannot start: ${(err as Error).message}`);
    process.exit(3);
  }
  log(`listening on ${values.socket} (Forkbench ${version})`);
  // Asked to stop (a person's kill, a logout): agents end cleanly, not orphaned.
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void server.stop(sig));
  // The terminal it was started from going away is no reason to stop: that is what it is for.
  process.on('SIGHUP', () => undefined);
  process.on('uncaughtException', (err) => {
    log(`uncaught exception: ${err.stack ?? err.message}`);
    void server.stop('uncaught exception');
  });
}

void main();
