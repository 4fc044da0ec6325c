import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../host/cliShim.js';
import { defaultDataRoot } from '../host/dataDir.js';
import { SuspendWatch } from '../host/suspendWatch.js';
import { ThreadManager } from '../host/threadManager.js';
import { startServe } from './serveServer.js';

/**
 * `forkbench serve [FOLDER] [--port N]` (and `npm run serve`): open FOLDER as a Thread and serve the window
 * to a browser on 127.0.0.1. Prints the URL (with its token) on stdout. Ctrl-C stops cleanly: every claim
 * is released with `host-stopped`, every agent's process group is ended, the board is flushed.
 */
export async function runServeCommand(argv: string[]): Promise<number> {
  let folder: string;
  let port = 0;
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { port: { type: 'string' } }, allowPositionals: true });
    if (positionals.length > 1) throw new Error('give at most one folder');
    folder = resolve(positionals[0] ?? process.cwd());
    if (values.port !== undefined) {
      if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) throw new Error(`--port takes a port number, not '${values.port}'`);
      port = Number(values.port);
    }
  } catch (err) {
    process.stderr.write(`forkbench serve: ${(err as Error).message}\nusage: forkbench serve [FOLDER] [--port N]\n`);
    return 2;
  }
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    process.stderr.write(`forkbench serve: ${folder} is not a folder\n`);
    return 2;
  }
  const staticDir = join(PROJECT_ROOT, 'dist-renderer');
  if (!fs.existsSync(join(staticDir, 'index.html'))) {
    process.stderr.write('forkbench serve: the window is not built; run `npm run build` first\n');
    return 2;
  }
  const threads = new ThreadManager({ dataRoot: defaultDataRoot(), warn: (m) => process.stderr.write(`${m}\n`) });
  try {
    await threads.open(folder);
  } catch (err) {
    process.stderr.write(`forkbench serve: cannot open ${folder}: ${(err as Error).message}\n`);
    await threads.dispose();
    return 1;
  }
  const served = await startServe({ threads, staticDir, port });
  const sleep = SuspendWatch.start((ms) => {
    process.stderr.write(`forkbench serve: the machine slept ${Math.round(ms / 1000)} s; live claims get grace\n`);
    void threads.resumeGrace();
  });
  process.stdout.write(`Forkbench is serving ${folder}\nOpen ${served.url}\n(Ctrl-C to stop)\n`);
  await new Promise<void>((done) => {
    let stopping = false;
    const stop = (sig: string) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`\nforkbench serve: ${sig}, stopping: releasing claims and ending agents…\n`);
      void (async () => {
        try {
          sleep?.dispose();
          await threads.dispose();
          await served.close();
        } catch (err) {
          process.stderr.write(`forkbench serve: while stopping: ${(err as Error).message}\n`);
        } finally {
          done();
        }
      })();
    };
    // `on`, not `once`, and repeats ignored: conf's exit hook (when-exit) re-raises every signal it catches,
    // and with no listener left that second SIGINT would kill the stop half-way.
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  process.stderr.write('forkbench serve: stopped\n');
  return 0;
}
