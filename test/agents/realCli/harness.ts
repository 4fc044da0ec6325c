/**
 * Shared set-up for the tests that run the real agent CLIs (installed as devDependencies) through their real
 * profiles, in real ptys, against a ThreadHost and a fake model server on 127.0.0.1.
 *
 * Each CLI gets a HOME of its own: the developer's logins and settings must neither leak into the test nor
 * be touched by it. What a CLI needs there to skip its first-run screens is the test's business (a person
 * who uses that CLI has done them once); what it needs to reach the board is the profile's.
 */
import * as fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import { ThreadHost } from '../../../src-main/host/threadHost.js';
import { ensureBuilt } from '../../helpers/cli.js';

const root = join(import.meta.dirname, '..', '..', '..');
const BIN = join(root, 'node_modules', '.bin');

/** Why a CLI's test cannot run here, or null when its binary is installed. */
export function missingCli(command: string): string | null {
  const path = join(BIN, command);
  if (!fs.existsSync(path)) return `${command} is not installed (node_modules/.bin/${command}); run npm install`;
  return null;
}

export interface RealCliThread {
  host: ThreadHost;
  /** The project folder (cwd of every pane). */
  folder: string;
  /** The HOME every pane gets. */
  home: string;
  /** Everything each pane printed, by agent id, for failure messages. */
  output(agentId: string): string;
  /** Resolves with the first board event (past or future) that matches. */
  event(match: (e: BoardEvent) => boolean, timeoutMs: number, what: string): Promise<BoardEvent>;
  dispose(): Promise<void>;
}

/**
 * A Thread on a fresh folder with one open task (T-1). `env` is added to the panes' environment (base URLs,
 * API keys); PATH puts the installed CLIs first, then the system's.
 */
export async function openRealCliThread(name: string, env: Record<string, string> = {}): Promise<RealCliThread> {
  ensureBuilt();
  const dir = fs.mkdtempSync(join(tmpdir(), `forkbench-realcli-${name}-`));
  const folder = join(dir, 'project');
  const home = join(dir, 'home');
  fs.mkdirSync(folder);
  fs.mkdirSync(home);
  const host = await ThreadHost.open({
    folder,
    dataRoot: join(dir, 'data'),
    runtimeRoot: join(dir, 'run'),
    liveness: false,
    env: {
      PATH: `${BIN}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: home,
      USER: process.env.USER ?? 'root',
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      SHELL: '/bin/bash',
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      ...env,
    },
  });
  await host.board.run((e) => e.addTask({ title: 'write hello.txt', body: 'Create hello.txt containing "hello".' }));
  const outputs = new Map<string, string>();
  const sub = host.onPaneData.event(({ agentId, data }) => outputs.set(agentId, ((outputs.get(agentId) ?? '') + data).slice(-100_000)));
  return {
    host,
    folder,
    home,
    output: (agentId) => outputs.get(agentId) ?? '',
    event: (match, timeoutMs, what) => boardEvent(host, match, timeoutMs, what),
    async dispose() {
      sub.dispose();
      await host.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The first event in the board's history or to come that matches. */
function boardEvent(host: ThreadHost, match: (e: BoardEvent) => boolean, timeoutMs: number, what: string): Promise<BoardEvent> {
  const past = host.board.logTail(1_000).find(match);
  if (past) return Promise.resolve(past);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const stop = host.board.onEvent((e) => {
      if (!match(e)) return;
      clearTimeout(timer);
      stop();
      resolve(e);
    });
  });
}

/** One request the fake model server received: path, parsed JSON body, headers. */
export interface ModelRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface FakeModelServer {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: ModelRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that hands each request (body parsed as JSON when it is JSON) to `answer`.
 * Requests `answer` does not take (returns false) get a 404 with the path, so a CLI probing an endpoint we
 * did not fake fails loudly in its own output instead of hanging.
 */
export async function startFakeModelServer(answer: (req: ModelRequest, res: ServerResponse) => boolean | Promise<boolean>): Promise<FakeModelServer> {
  const requests: ModelRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON: kept as text */
      }
      const request: ModelRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
      requests.push(request);
      Promise.resolve(answer(request, res)).then(
        (taken) => {
          if (taken) return;
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `the fake model server has no ${request.method} ${request.path}` } }));
        },
        (err: Error) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: err.message } }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes one server-sent event. */
export function sse(res: ServerResponse, data: unknown, event?: string): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}
