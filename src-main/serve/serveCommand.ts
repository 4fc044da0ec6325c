import { checkBoardName, parseBoardUrl } from '../board/pg/connection.js';
import { checkHostName } from '../board/pg/hostName.js';
import { BOARD_URL_WAYS, takeBoardUrl, takeBoardUrlFromEnv } from '../board/pg/boardUrlSource.js';
import { hostLeaseOf, type SharedBoardSetting } from '../board/openBoard.js';
import type { HostLeaseTiming } from '../board/pg/hostLease.js';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from '../thread/cliShim.js';
import { defaultDataRoot } from '../base/dataDir.js';
import { outliveClosedStdio } from '../base/closedStdio.js';
import { redactSecrets } from '../base/redactSecrets.js';
import { PtyHostLink } from '../ptyhost/ptyHostLink.js';
import { ptyHostIdleMs } from '../ptyhost/ptyHostLauncher.js';
import { HostProcess } from '../process/hostProcess.js';
import { startServe, type ServeHandle } from './serveServer.js';
import { loadServeState, saveServeState } from './serveState.js';
import { MOVE_FLAG, MOVES, type BoardMove } from '../window/boardMove.js';

/** How long a stop may take: ending agents waits out their grace (a few seconds each, in parallel) and the
 *  board's last write; a stop still going after 30 s is wedged (out of descriptors, a link that never
 *  answers), and a process that stays answering 503 forever is worse than one that exits. */
const STOP_DEADLINE_MS = 30_000;

const USAGE = 'usage: forkbench serve [FOLDER] [--port N] [--keep-agents] [--replace-pty-host] [--uncontained PROFILE|all]... [--no-pty-host] [--board-url-file PATH | --board-url-stdin [--board-name NAME] [--host-name NAME] [--host-lease-ms N] [--move copy|empty]]';

/**
 * `forkbench serve [FOLDER] [--port N]` (and `npm run serve`): open FOLDER as a Thread and serve the window
 * to a browser on 127.0.0.1. Prints a link on stdout whose one-time code lets one browser in (and a new link
 * each time one is used). Ctrl-C stops cleanly: every claim is released with `host-stopped`, every agent's
 * process group is ended, the board is flushed; an uncaught exception stops the same way.
 *
 * The agents run in the data folder's pty host (src-main/ptyhost), so a `serve` that crashes or is killed
 * -9 finds them again on its next start, claims and screens included. `--keep-agents` makes Ctrl-C leave
 * them running too; `--no-pty-host` (or FORKBENCH_PTY_HOST=0) runs them as serve's own children instead.
 * A pty host of another Forkbench version is refused; `--replace-pty-host` stops it, ending its agents, and
 * starts this version's.
 */
export async function runServeCommand(argv: string[], readStdin: () => Promise<string> = readAllStdin): Promise<number> {
  // The board's URL leaves the environment before anything can start a child (boardUrlSource.ts); a start
  // refused below has started nothing either.
  const urlFromEnv = takeBoardUrlFromEnv(process.env);
  outliveClosedStdio();
  let folder: string;
  let port: number | null = null;
  let keepAgents = false;
  let uncontained: string[] = [];
  let replacePtyHost = false;
  let usePtyHost = process.env.FORKBENCH_PTY_HOST !== '0';
  let idleMs: number;
  let sharedBoard: SharedBoardSetting | undefined;
  let move: BoardMove | undefined;
  let hostName: string | undefined;
  let hostLease: HostLeaseTiming | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        'keep-agents': { type: 'boolean' },
        // Agents of this profile (or `all`) run outside their sandbox (docs/sandbox.md); the window is warned.
        uncontained: { type: 'string', multiple: true },
        'replace-pty-host': { type: 'boolean' },
        'no-pty-host': { type: 'boolean' },
        board: { type: 'string' },
        'board-url-file': { type: 'string' },
        'board-url-stdin': { type: 'boolean' },
        'board-name': { type: 'string' },
        // A Thread whose local board has tasks, opened on the shared board: copy them there, or start empty.
        move: { type: 'string' },
        // This host's name on the shared board, where other hosts' windows list its agents ("shell 1 on NAME").
        'host-name': { type: 'string' },
        // How long this host may go silent on the shared board before the others end its claims (openBoard.ts).
        'host-lease-ms': { type: 'string' },
      },
      allowPositionals: true,
    });
    if (values['no-pty-host']) usePtyHost = false;
    keepAgents = values['keep-agents'] === true;
    uncontained = values.uncontained ?? [];
    replacePtyHost = values['replace-pty-host'] === true;
    if (keepAgents && !usePtyHost) throw new Error('--keep-agents needs the pty host (leave out --no-pty-host and FORKBENCH_PTY_HOST=0)');
    if (replacePtyHost && !usePtyHost) throw new Error('--replace-pty-host needs the pty host (leave out --no-pty-host and FORKBENCH_PTY_HOST=0)');
    idleMs = ptyHostIdleMs();
    if (positionals.length > 1) throw new Error('give at most one folder');
    const boardUrl = await takeBoardUrl({
      flag: values.board,
      file: values['board-url-file'],
      stdin: values['board-url-stdin'],
      fromEnv: urlFromEnv,
      readStdin,
    });
    if (boardUrl !== null) {
      parseBoardUrl(boardUrl);
      sharedBoard = { url: boardUrl, ...(values['board-name'] !== undefined ? { name: checkBoardName(values['board-name']) } : {}) };
    } else if (values['board-name'] !== undefined) throw new Error(`--board-name names a shared board: give its URL too, with ${BOARD_URL_WAYS}`);
    if (values.move !== undefined) {
      if (!(MOVES as readonly string[]).includes(values.move)) throw new Error(`${MOVE_FLAG} takes copy or empty, not '${values.move}'`);
      if (!sharedBoard) throw new Error(`${MOVE_FLAG} says what happens to the Thread's local board on a shared board: give the board's URL too, with ${BOARD_URL_WAYS}`);
      move = values.move as BoardMove;
    }
    if (values['host-name'] !== undefined) {
      if (boardUrl === null) throw new Error(`--host-name names this host on a shared board: give the board's URL too, with ${BOARD_URL_WAYS}`);
      hostName = checkHostName(values['host-name']);
    }
    if (values['host-lease-ms'] !== undefined) {
      if (boardUrl === null) throw new Error(`--host-lease-ms is this host's lease on a shared board: give the board's URL too, with ${BOARD_URL_WAYS}`);
      hostLease = hostLeaseOf(values['host-lease-ms']);
    }
    folder = resolve(positionals[0] ?? process.cwd());
    if (values.port !== undefined) {
      if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) throw new Error(`--port takes a port number, not '${values.port}'`);
      port = Number(values.port);
    }
  } catch (err) {
    process.stderr.write(`forkbench serve: ${(err as Error).message}\n${USAGE}\n`);
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
  // serve's stderr is its log: no line of it carries a URL's credentials (a library's error may quote one).
  const warn = (m: string) => process.stderr.write(`${redactSecrets(m)}\n`);
  const dataRoot = defaultDataRoot();
  const claimed = HostProcess.claim({ dataRoot, kind: 'forkbench serve', name: 'forkbench serve', warn, sharedBoard, uncontained, move, ...(hostName !== undefined ? { hostName } : {}), ...(hostLease !== undefined ? { hostLease } : {}) });
  if (!claimed.ok) {
    process.stderr.write(`forkbench serve: ${claimed.message}\n`);
    return 1;
  }
  const hostProcess = claimed.host;
  // The address and sessions of the last run on this data folder: a page left open across a restart reconnects.
  let state: ReturnType<typeof loadServeState>;
  try {
    state = loadServeState(dataRoot);
  } catch (err) {
    process.stderr.write(`forkbench serve: cannot keep the window's state in ${dataRoot}: ${(err as Error).message}\n`);
    await hostProcess.abandonStart();
    return 1;
  }
  if (state.replaced) warn(`forkbench serve: ${state.replaced}; started afresh (pages opened before need a new link)`);
  // What the next run finds: the sessions as they change, the port once listening.
  const kept = { host: state.host, port: state.port, sessions: state.sessions, codes: state.codes };
  const keep = () => {
    try {
      saveServeState(dataRoot, kept);
    } catch (err) {
      warn(`forkbench serve: cannot record the window's state in ${dataRoot}: ${(err as Error).message}; a restart may need a new link`);
    }
  };
  let ptyHost: PtyHostLink | undefined;
  if (usePtyHost) {
    try {
      ptyHost = await PtyHostLink.open(dataRoot, { idleMs, warn, replaceOther: replacePtyHost });
    } catch (err) {
      process.stderr.write(`forkbench serve: cannot use the pty host: ${(err as Error).message}\n`);
      await hostProcess.abandonStart();
      return 1;
    }
  }
  hostProcess.usePtyHost(ptyHost);
  // The port first: a port that is taken is said in one line before anything is opened (no Thread, no
  // agents' socket, no journal), and holding it from here on leaves no gap for another process to take it.
  let served: ServeHandle;
  const listen = (on: number) =>
    startServe({
      windows: hostProcess.windows,
      staticDir,
      port: on,
      host: state.host,
      sessions: { port: state.port, saved: state.sessions, codes: state.codes },
      onSessionsChanged: (saved, codes) => {
        kept.sessions = saved;
        kept.codes = codes;
        keep();
      },
      // Pages come in once the Thread is open (a page left open across a restart asks for it at once).
      holdWindows: true,
      warn,
      // Each link opens one browser; the next one gets a link of its own.
      onLinkUsed: (url) => process.stdout.write(`That link is used up now. For another browser:\nOpen ${url}\n`),
    });
  try {
    try {
      served = await listen(port ?? state.port ?? 0);
    } catch (err) {
      // The last run's port is a wish, not a promise: taken now, any free one does (the pages open on the
      // old address then need the new link, which is printed as always).
      if (port !== null || state.port === null || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      warn(`forkbench serve: port ${state.port} (the last run's) is taken now; pages opened on it need the new link`);
      served = await listen(0);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') process.stderr.write(`forkbench serve: port ${port} is in use; pick another with --port N, or leave it out for a free one\n`);
    else process.stderr.write(`forkbench serve: cannot listen on 127.0.0.1:${port ?? 0}: ${(err as Error).message}\n`);
    await hostProcess.abandonStart();
    return 1;
  }
  if (served.port !== kept.port) {
    kept.port = served.port;
    keep();
  }
  // The origin only: the link's one-time code is not for whoever reads the lock, and it changes on use.
  hostProcess.setUrl(new URL(served.url).origin);
  try {
    await hostProcess.openThread(folder);
  } catch (err) {
    process.stderr.write(`forkbench serve: cannot open ${folder}: ${(err as Error).message}\n`);
    await served.close();
    await hostProcess.abandonStart();
    return 1;
  }
  served.admit();
  hostProcess.watchSleep();
  process.stdout.write(`Forkbench is serving ${folder}\nOpen ${served.url}\n(Ctrl-C to stop)\n`);
  const code = await new Promise<number>((done) => {
    let stopping = false;
    let finished = false;
    /** The stop could not finish (it threw, or it overran its deadline): exit
     *  now, and leave whatever agents are still alive to the pty host; the next serve finds them. */
    const giveUp = (why: string) => {
      if (finished) return;
      finished = true;
      process.stderr.write(`forkbench serve: the stop could not finish (${why}); exiting${ptyHost ? `, the agents still running stay in the pty host (pid ${ptyHost.hostPid})` : ''}\n`);
      void hostProcess.abandon().then(() => done(1));
    };
    const stop = (why: string, exitCode: number) => {
      // Repeats are ignored: conf's exit hook re-raises every signal it catches (see below); a stop that hangs
      // is ended by its deadline instead.
      if (stopping) return;
      stopping = true;
      process.stderr.write(
        keepAgents
          ? `\nforkbench serve: ${why}, stopping: agents keep running in the pty host (pid ${ptyHost?.hostPid}); start serve again to see them…\n`
          : `\nforkbench serve: ${why}, stopping: releasing claims and ending agents…\n`,
      );
      const deadline = setTimeout(() => giveUp(`still stopping after ${STOP_DEADLINE_MS / 1000} s`), STOP_DEADLINE_MS);
      void (async () => {
        try {
          // The windows hear it first: their pages show the host stopped now, not after every agent ended.
          await hostProcess.stop({ keepAgents, tellWindows: () => served.stopping(), closeTransport: () => served.close() });
        } catch (err) {
          clearTimeout(deadline);
          return giveUp(describeFault(err));
        }
        clearTimeout(deadline);
        if (finished) return;
        finished = true;
        done(exitCode);
      })();
    };
    // `on`, not `once`, and repeats ignored: conf's exit hook (when-exit) re-raises every signal it catches,
    // and with no listener left that second SIGINT would kill the stop half-way.
    process.on('SIGINT', () => stop('SIGINT', 0));
    process.on('SIGTERM', () => stop('SIGTERM', 0));
    // Without these a fault nobody caught ends the process at once: claims not released, agents orphaned,
    // the agents' socket file left behind. An exception thrown to the top left whatever it was doing half
    // done, so the host stops the way Ctrl-C stops it. A rejected promise nobody awaited ended only its own
    // chain of work, so it is reported and the host goes on serving.
    process.on('uncaughtException', (err) => {
      process.stderr.write(`forkbench serve: uncaught exception: ${describeFault(err)}\n`);
      stop('uncaught exception', 1);
    });
    process.on('unhandledRejection', (reason) => {
      process.stderr.write(`forkbench serve: unhandled rejection (still serving): ${describeFault(reason)}\n`);
    });
  });
  process.stderr.write('forkbench serve: stopped\n');
  return code;
}

/** All of stdin, for `--board-url-stdin`: `pass show board | forkbench serve --board-url-stdin`. */
async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A thrown value as text for the log. Never throws itself: a throw in a fault handler would end the process. */
function describeFault(value: unknown): string {
  try {
    return redactSecrets((value instanceof Error ? value.stack : undefined) ?? String(value));
  } catch {
    return 'a value that cannot be printed';
  }
}
