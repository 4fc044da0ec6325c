/**
 * Shared set-up for the tests that run the real agent CLIs (installed as devDependencies) through their real
 * profiles, in real ptys, against a ThreadHost and a fake model server on 127.0.0.1.
 *
 * Each CLI gets a HOME of its own: the developer's logins and settings must neither leak into the test nor
 * be touched by it. What a CLI needs there to skip its first-run screens is the test's business (a person
 * who uses that CLI has done them once); what it needs to reach the board is the profile's.
 *
 * Nothing may leave this machine: every pane's proxy variables point at a trap on 127.0.0.1 that refuses and
 * records whatever a CLI tries to fetch for itself (update checks, telemetry, announcements), and loopback,
 * where the fake model servers are, goes direct.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer, type ServerResponse, type IncomingMessage } from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import headlessModule from '@xterm/headless';
import { afterEach, beforeAll, describe, expect } from 'vitest';
import type { ProfileIdShared } from '../../../src-shared/agents/profileIds.js';
import type { BoardEvent } from '../../../src-shared/board/events.js';
import type { AgentInfo } from '../../../src-shared/protocol/windowApi.js';
import { findOnPath } from '../../../src-main/base/pathLookup.js';
import { ThreadHost } from '../../../src-main/thread/threadHost.js';
import { PtyHostLink } from '../../../src-main/ptyhost/ptyHostLink.js';
import { ensureBuilt } from '../cli.js';
import { nextEvent } from '../events.js';
import { openTestHost } from '../testHost.js';

// CommonJS only: under NodeNext its exports arrive on the default import.
const { Terminal } = headlessModule;

export const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'node_modules', '.bin');

/** The work every scripted model does on the board, asked for and noted in the same words in each test. */
export const ASK = 'Take task T-1 from the board, note that you started, renew it, then show the board.';
export const NOTE = 'Starting on hello.txt (a note from the scripted model).';

/** Why a test that reads a pane's environment cannot run here, or null. */
export const NO_PROC = fs.existsSync('/proc/self/environ') ? null : "needs /proc to read a pane's environment";

/** Where panes and `run` look for commands: the devDependencies' binaries first, then this machine's PATH. */
export const CLI_PATH = `${BIN}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`;
const cliPath = (command: string): string | null => findOnPath(command, { PATH: CLI_PATH });

/** Why a CLI's test cannot run here, or null when its binary is installed: a devDependency, or on PATH (Aider
 *  comes from PyPI, not npm). */
function missingCli(command: string): string | null {
  if (cliPath(command)) return null;
  return `${command} is not installed (neither node_modules/.bin/${command}, which npm install provides, nor on PATH)`;
}

/**
 * One CLI's suite: skipped, saying why in its title, when the CLI is not installed or `skip` gives another
 * reason. The `forkbench` CLI is built first when its sources changed: half a minute on a busy machine,
 * which belongs to no test's time.
 */
export function describeRealCli(command: string, title: string, body: () => void, skip: string | null = null): void {
  const why = missingCli(command) ?? skip;
  describe.skipIf(why !== null)(`${title}${why ? ` (skipped: ${why})` : ''}`, () => {
    beforeAll(() => ensureBuilt(), 180_000);
    body();
  });
}

/**
 * Closes after each test what it opened: `const open = closedAfterEach()` in a describe, then
 * `const t = open(await openRealCliThread(...))`. The last opened is closed first (the Thread before the
 * fake server its panes talk to).
 */
export function closedAfterEach(): <T extends { dispose(): Promise<void> } | { close(): Promise<void> }>(thing: T) => T {
  const opened: Array<{ dispose(): Promise<void> } | { close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of opened.splice(0).reverse()) await ('dispose' in thing ? thing.dispose() : thing.close());
  });
  return (thing) => {
    opened.push(thing);
    return thing;
  };
}

// ---------------------------------------------------------------------------------------------------------
// The Thread

export interface RealCliThread {
  /** The Thread's host: another object after `restart`. */
  host: ThreadHost;
  /** The project folder (cwd of every pane). */
  folder: string;
  /** The HOME every pane gets. */
  home: string;
  /**
   * What every pane starts from before its profile adds its own: PATH with the installed CLIs first, the
   * isolated HOME and XDG folders, the proxy trap, and the test's `env`. A CLI subcommand run with it reads
   * the same user files the pane's CLI reads.
   */
  env: Record<string, string>;
  /** The proxy every pane's proxy variables point at. */
  trap: ProxyTrap;
  /** Everything each pane printed, by agent id. */
  output(agentId: string): string;
  /** Resolves with the first board event (past or future) that matches. */
  event(match: (e: BoardEvent) => boolean, timeoutMs: number, what: string): Promise<BoardEvent>;
  /** Launches a pane through `kind`'s profile with a screen on it (see LaunchOptions). */
  launch(kind: ProfileIdShared, options?: LaunchOptions): Promise<Pane>;
  /** Resumes an exited agent's conversation through its profile (`panes.resume`): the same agent in a new
   *  process, with a new screen that shows what the new process prints. */
  resume(agentId: string, options?: LaunchOptions): Promise<Pane>;
  /**
   * A host restart, as `serve --keep-agents` stopping and starting again: the ThreadHost leaves (its agents and
   * their claims live on in the pty host), and a new one opens on the same board and adopts them. Only for a
   * Thread opened with `ptyHost`. Panes from before are the old host's: take them back with `reattach`.
   */
  restart(): Promise<void>;
  /** `pane`'s agent on the host as it is now (after a restart), its screen as the host's mirror shows it. */
  reattach(pane: Pane, options?: LaunchOptions): Promise<Pane>;
  /** Runs an installed CLI to its end, by default in the folder with `env`; killed if the test ends first. */
  run(command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<RunResult>;
  dispose(): Promise<void>;
}

export interface LaunchOptions {
  cols?: number;
  rows?: number;
  /** Whether the screen answers the terminal queries the program sends (see PaneScreen). */
  answerQueries?: boolean;
  /** What else a failing step should tell, e.g. the requests the fake model server got. */
  diagnose?: () => string;
}

export interface Pane {
  agent: AgentInfo;
  screen: PaneScreen;
  /**
   * Resolves as `p` does, but rejects at once if the pane's program exits first (nothing it was waited for
   * can come then), and a rejection tells the test's diagnosis, the proxy trap and the screen.
   */
  step<T>(p: Promise<T>): Promise<T>;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout then stderr. */
  out: string;
}

/** The directories of a Thread, for an `env` that points into them. */
export interface ThreadDirs {
  home: string;
  folder: string;
}

export interface ThreadOptions {
  /** Panes in a pty host of their own, so that they outlive the ThreadHost (`restart`); also on with
   *  FORKBENCH_REALCLI_PTY_HOST=1. */
  ptyHost?: boolean;
  /** Profiles whose panes run outside Forkbench's sandbox (ThreadHost's `uncontained`): a CLI's own sandbox,
   *  which cannot nest in ours, is tested there. */
  uncontained?: readonly string[];
  /**
   * Commands the panes must not find on PATH though this machine has them, as on a machine without them
   * (e.g. `bwrap`, for a CLI that uses it when installed): each PATH folder that holds one is replaced by
   * a folder of links to its other entries.
   */
  hide?: readonly string[];
}

/**
 * A Thread on a fresh folder with one open task (T-1). `env` (or what it returns for the Thread's folders)
 * is added to the panes' environment: base URLs, API keys, a CLI's home inside the isolated HOME.
 */
export async function openRealCliThread(
  name: string,
  env: Record<string, string> | ((dirs: ThreadDirs) => Record<string, string>) = {},
  { hide = [], uncontained, ptyHost: withPtyHost = false }: ThreadOptions = {},
): Promise<RealCliThread> {
  const dir = fs.mkdtempSync(join(tmpdir(), `forkbench-realcli-${name}-`));
  const folder = join(dir, 'project');
  const home = join(dir, 'home');
  fs.mkdirSync(folder);
  fs.mkdirSync(home);
  const trap = await startProxyTrap();
  const baseEnv: Record<string, string> = {
    PATH: CLI_PATH,
    HOME: home,
    USER: process.env.USER ?? 'root',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    SHELL: '/bin/bash',
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    ...proxyEnv(trap),
    ...(typeof env === 'function' ? env({ home, folder }) : env),
  };
  if (hide.length) baseEnv.PATH = pathWithout(baseEnv.PATH!, hide, join(dir, 'path'));
  // FORKBENCH_REALCLI_PTY_HOST=1: the panes live in a pty host, as under `serve` and the app, so each CLI's
  // state is read off the pty host's mirror (its signals as frames, its screen by request).
  const linkOpen = () => PtyHostLink.open(join(dir, 'data'), { idleMs: 60_000 });
  let ptyHost = withPtyHost || process.env.FORKBENCH_REALCLI_PTY_HOST === '1' ? await linkOpen() : undefined;
  const hostOpen = async () => (await openTestHost({ closedBy: 'caller', folder, dataRoot: join(dir, 'data'), runtimeRoot: join(dir, 'run'), liveness: false, env: baseEnv, ptyHost, uncontained })).host;
  let host = await hostOpen();
  await host.board.run((e) => e.addTask({ title: 'write hello.txt', body: 'Create hello.txt containing "hello".' }));
  const outputs = new Map<string, string>();
  const record = () => host.roster.relay.onData.event(({ agentId, data }) => outputs.set(agentId, ((outputs.get(agentId) ?? '') + data).slice(-100_000)));
  let recording = record();
  const cleanups: Array<() => void> = [() => recording.dispose()];
  const aborted = new AbortController();
  /** A screen on the agent's pane and its `step`; the screen starts with what the pane printed after `from`. */
  const paneOn = (agent: AgentInfo, from: number | string, { cols, rows, answerQueries, diagnose }: Required<Omit<LaunchOptions, 'diagnose'>> & LaunchOptions): Pane => {
    // Everything so far, then every chunk to come: both in this same tick, so nothing is missed.
    const screen = new PaneScreen(host, agent.id, typeof from === 'string' ? from : t.output(agent.id).slice(from), { cols, rows, answerQueries });
    const exited = new Promise<never>((_, reject) => {
      const sub = host.roster.onExit.event((e) => {
        if (e.agentId === agent.id) reject(new Error(`${agent.profile} exited (${JSON.stringify(e.exit)})`));
      });
      cleanups.push(() => sub.dispose());
    });
    exited.catch(() => undefined);
    cleanups.push(() => screen.dispose());
    const tell = () =>
      [diagnose && `--- ${agent.profile}: the test's diagnosis ---\n${diagnose()}`, `--- proxy trap ---\n${trap.attempts.join('\n')}`, `--- screen ---\n${screen.text().trimEnd().split('\n').slice(-60).join('\n')}`]
        .filter(Boolean)
        .join('\n');
    const step = async <T>(p: Promise<T>): Promise<T> => {
      try {
        return await Promise.race([p, exited]);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${tell()}`);
      }
    };
    return { agent, screen, step };
  };
  const t: RealCliThread = {
    host,
    folder,
    home,
    env: baseEnv,
    trap,
    output: (agentId) => outputs.get(agentId) ?? '',
    event: (match, timeoutMs, what) => boardEvent(host, match, timeoutMs, what),
    async launch(kind, { cols = 120, rows = 40, answerQueries = false, diagnose } = {}) {
      return paneOn(await host.roster.launch(kind, { cols, rows }), 0, { cols, rows, answerQueries, diagnose });
    },
    async resume(agentId, { cols = 120, rows = 40, answerQueries = false, diagnose } = {}) {
      const before = t.output(agentId).length;
      return paneOn(await host.roster.resume(agentId), before, { cols, rows, answerQueries, diagnose });
    },
    async restart() {
      if (!ptyHost) throw new Error('restart needs a Thread opened with ptyHost: its panes must outlive the host');
      recording.dispose();
      await host.leave();
      ptyHost.leave();
      ptyHost = await linkOpen();
      host = await hostOpen();
      t.host = host;
      recording = record();
    },
    async reattach(pane, { cols = 120, rows = 40, answerQueries = false, diagnose } = {}) {
      const agent = host.roster.agents().find((a) => a.id === pane.agent.id);
      if (!agent) throw new Error(`${pane.agent.id} is not on the host`);
      pane.screen.dispose();
      return paneOn(agent, await host.roster.relay.screen(agent.id), { cols, rows, answerQueries, diagnose });
    },
    run(command, args, { cwd = folder, env: runEnv = baseEnv, timeoutMs = 30_000 } = {}) {
      return new Promise((resolve) => {
        execFile(findOnPath(command, { PATH: BIN }) ?? command, args, { cwd, env: runEnv, timeout: timeoutMs, signal: aborted.signal }, (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr, out: `${stdout}${stderr}` });
        });
      });
    },
    async dispose() {
      aborted.abort();
      for (const c of cleanups.splice(0)) c();
      await host.dispose();
      await ptyHost?.shutdown();
      await trap.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/**
 * `path` with every folder that holds one of `commands` replaced by a folder (made under `into`) of links to
 * the folder's other entries; a folder reached twice (/bin is /usr/bin on a merged-/usr system) is made once.
 */
export function pathWithout(path: string, commands: readonly string[], into: string): string {
  const made = new Map<string, string>();
  return path
    .split(delimiter)
    .map((folder) => {
      if (!folder || !commands.some((c) => fs.existsSync(join(folder, c)))) return folder;
      const real = fs.realpathSync(folder);
      let shadow = made.get(real);
      if (!shadow) {
        shadow = join(into, String(made.size));
        fs.mkdirSync(shadow, { recursive: true });
        for (const entry of fs.readdirSync(real)) if (!commands.includes(entry)) fs.symlinkSync(join(real, entry), join(shadow, entry));
        made.set(real, shadow);
      }
      return shadow;
    })
    .join(delimiter);
}

/** The first event in the board's history or to come that matches. */
function boardEvent(host: ThreadHost, match: (e: BoardEvent) => boolean, timeoutMs: number, what: string): Promise<BoardEvent> {
  const past = host.board.logTail(1_000).find(match);
  return past ? Promise.resolve(past) : nextEvent(host, match, timeoutMs, what);
}

type EventOf<K extends BoardEvent['kind']> = Extract<BoardEvent, { kind: K }>;

/**
 * Waits for the board work every scripted model does (claim T-1, note on it with NOTE, renew it with the
 * claim's token), checks it reached the board as the agent's own and nothing was refused, and returns the
 * events. Each wait goes through the pane's `step`, so a failure tells what the pane showed.
 */
export async function boardWork(t: RealCliThread, pane: Pane, claimWithinMs = 30_000): Promise<{ grant: EventOf<'grant'>; note: EventOf<'note'>; renew: EventOf<'renew'> }> {
  const id = pane.agent.id;
  const mine = (e: BoardEvent) => 'agentId' in e && 'taskId' in e && e.agentId === id && e.taskId === 'T-1';
  const wait = async <K extends BoardEvent['kind']>(kind: K, match: (e: EventOf<K>) => boolean, timeoutMs: number, what: string) =>
    (await pane.step(t.event((e) => e.kind === kind && match(e as EventOf<K>), timeoutMs, what))) as EventOf<K>;
  const grant = await wait('grant', mine, claimWithinMs, 'the claim of T-1');
  const note = await wait('note', (e) => e.by === id && e.taskId === 'T-1', 20_000, 'the note on T-1');
  // A note renews the lease as well; the renew tool's own renew is the one after that.
  const byNote = await wait('renew', (e) => mine(e) && e.seq > note.seq, 20_000, 'the renew that comes with the note');
  const renew = await wait('renew', (e) => mine(e) && e.seq > byNote.seq, 20_000, 'the renew of T-1');
  expect(grant).toMatchObject({ taskId: 'T-1', agentId: id, by: id });
  expect(note).toMatchObject({ taskId: 'T-1', by: id, text: NOTE });
  expect(renew).toMatchObject({ taskId: 'T-1', agentId: id, via: 'write', token: grant.token });
  expect((await t.host.board.log()).filter((e) => e.kind === 'write-rejected')).toEqual([]);
  return { grant, note, renew };
}

/** The environment a process started with (Linux): a pane's, exactly as the profile and host built it. */
export function environOf(pid: number): NodeJS.ProcessEnv {
  return Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** A CLI's output without terminal control sequences (some colour it even when not on a terminal). */
export function plain(s: string): string {
  return (
    s
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[\d*C/g, ' ')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]/g, '')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b[@-_]/g, '')
  );
}

/** Whitespace removed: a TUI wraps and pads lines as the pane's width makes it. */
export const squeeze = (s: string) => s.replace(/\s+/g, '');

// ---------------------------------------------------------------------------------------------------------
// The screen

/**
 * A pane as the window's terminal shows it: a headless xterm fed with the pane's output. TUIs redraw in
 * place (a status mark written over a spinner, spaces as cursor moves), so only a screen reads right.
 *
 * With `answerQueries` it answers the terminal queries the program sends from then on (cursor position,
 * device attributes) as the window's xterm does; output from before the screen existed is replayed
 * without answers, since a late answer would arrive as typing.
 */
export class PaneScreen {
  private readonly term: InstanceType<typeof Terminal>;
  private readonly changed = new Set<() => void>();
  /** Every non-blank line the screen ever showed, so a dialog that came and went is still found. */
  private readonly shown = new Set<string>();
  private readonly subs: Array<{ dispose(): void }> = [];

  constructor(
    private readonly host: ThreadHost,
    private readonly agentId: string,
    past: string,
    private readonly o: { cols: number; rows: number; answerQueries: boolean },
  ) {
    this.term = new Terminal({ cols: o.cols, rows: o.rows, scrollback: 5_000, allowProposedApi: true });
    let answering = false;
    this.term.write(past, () => {
      answering = o.answerQueries;
      this.updated();
    });
    this.subs.push(
      host.roster.relay.onData.event((e) => {
        if (e.agentId === agentId) this.term.write(e.data, () => this.updated());
      }),
      this.term.onData((reply) => {
        if (answering) host.roster.relay.input(agentId, reply);
      }),
    );
  }

  /** Scrollback and screen, one line per row. */
  text(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n');
  }

  /** The screen alone, one line per row, trailing blanks trimmed. */
  visible(): string {
    const b = this.term.buffer.active;
    const lines: string[] = [];
    for (let i = b.viewportY; i < b.viewportY + this.o.rows; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
    return lines.join('\n').replace(/\s+$/, '');
  }

  /** Every line the screen ever showed (each once, trimmed), in the order they first showed. */
  seen(): string {
    return [...this.shown].join('\n');
  }

  /** Resolves once `ok` holds, checked after every output the terminal takes in; rejects after timeoutMs. */
  until(ok: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ok()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.changed.delete(check);
      };
      this.changed.add(check);
      check();
    });
  }

  /** Resolves once the terminal (scrollback included) holds `text`, however it is wrapped. */
  shows(text: string, timeoutMs: number, what: string): Promise<void> {
    return this.until(() => squeeze(this.text()).includes(squeeze(text)), timeoutMs, what);
  }

  /**
   * Enters a line as a person pasting it would: the text as the window's terminal pastes it (bracketed when
   * the program asked for bracketed paste), then Enter once the screen shows it (`echoed`, else its start
   * anywhere on screen: a prompt box wraps a long line between its borders). Sent in one write with the
   * Enter, TUIs take the whole chunk for a paste, in which the Enter is a newline rather than "send".
   */
  async type(text: string, echoed?: RegExp, enterAfterMs = 0): Promise<void> {
    this.host.roster.relay.input(this.agentId, this.term.modes.bracketedPasteMode ? `\x1b[200~${text}\x1b[201~` : text);
    const start = squeeze(text.slice(0, 40));
    const shown = echoed ? () => echoed.test(this.visible()) : () => squeeze(this.visible()).includes(start);
    await this.until(shown, 10_000, `"${text}" in the prompt`);
    // A CLI's own timer after a paste (see GEMINI_PASTE_GUARD_MS), not a wait for output.
    if (enterAfterMs > 0) await new Promise((r) => setTimeout(r, enterAfterMs));
    this.host.roster.relay.input(this.agentId, '\r');
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
    this.changed.clear();
    this.term.dispose();
  }

  private updated(): void {
    for (const line of this.visible().split('\n')) if (line.trim()) this.shown.add(line.trim());
    for (const check of [...this.changed]) check();
  }
}

// ---------------------------------------------------------------------------------------------------------
// The network: the proxy trap and the fake model servers

export interface ProxyTrap {
  /** http://127.0.0.1:PORT */
  url: string;
  /** One entry per connection, its first line: `CONNECT host:443 HTTP/1.1` for HTTPS, `GET http://…` for HTTP. */
  attempts: string[];
  close(): Promise<void>;
}

/**
 * A proxy on 127.0.0.1 that forwards nothing: a CLI whose proxy variables point here cannot reach another
 * address through its proxy-aware HTTP stack, and each attempt is recorded and refused at once (rather than
 * left to time out). A plain TCP server rather than an HTTP one: it records a connection whatever it sends
 * (even nothing), and a tunnel's socket, which an HTTP server hands off, is still its own to close.
 */
export async function startProxyTrap(): Promise<ProxyTrap> {
  const attempts: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const at = attempts.push('(a connection that sent nothing)') - 1;
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', (d: Buffer) => {
      attempts[at] = d.toString('latin1').split('\r\n')[0] ?? '';
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
  });
  return { ...(await listen(server, () => sockets.forEach((s) => s.destroy()))), attempts };
}

/** Every proxy variable, in both spellings tools read, at the trap; loopback (the fake servers) goes direct. */
export function proxyEnv(trap: ProxyTrap): Record<string, string> {
  const proxies = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY'].flatMap((k) => [k, k.toLowerCase()]);
  return { ...Object.fromEntries(proxies.map((k) => [k, trap.url])), NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
}

/** Listens on a free port of 127.0.0.1; `close` drops every connection (`drop`), then stops. */
async function listen(server: net.Server, drop: () => void): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        drop();
        server.close(() => resolve());
      }),
  };
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
  const server = createServer((req, res) => {
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
          if (!taken) json(res, { error: { message: `the fake model server has no ${request.method} ${request.path}` } }, 404);
        },
        (err: Error) => json(res, { error: { message: err.message } }, 500),
      );
    });
  });
  return { ...(await listen(server, () => server.closeAllConnections())), requests };
}

export interface ScriptedModelServer<C, T> extends FakeModelServer {
  /** The agent's conversation requests, each with the turn the script answered it with. */
  turns: Array<{ conversation: C; turn: T }>;
  /** One line per request, for failure messages. */
  summary(): string;
}

/**
 * startFakeModelServer for a scripted model: `answer` records each turn the script plays with `played`, and
 * `summarize` is the protocol's one-line view of a request body (null for a body that is no model call).
 */
export async function startScriptedModelServer<C extends { body: unknown }, T, B extends object>(
  answer: (req: ModelRequest, res: ServerResponse, played: (conversation: C, turn: T) => void) => boolean | Promise<boolean>,
  summarize: (body: Partial<B>) => string | null,
): Promise<ScriptedModelServer<C, T>> {
  const turns: ScriptedModelServer<C, T>['turns'] = [];
  const server = await startFakeModelServer((req, res) => answer(req, res, (conversation, turn) => turns.push({ conversation, turn })));
  const line = (r: ModelRequest) => {
    const head = `${r.method} ${r.path}`;
    const what = r.body && typeof r.body === 'object' ? summarize(r.body as Partial<B>) : null;
    if (what === null) return head;
    const played = turns.find((t) => t.conversation.body === r.body);
    return `${head} ${what}: ${played ? `agent turn → ${JSON.stringify(played.turn).slice(0, 200)}` : 'side call'}`;
  };
  return { ...server, turns, summary: () => server.requests.map(line).join('\n') };
}

/** Answers with one JSON value. */
export function json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** Starts a server-sent-event stream; `sse` writes its events. */
export function sseStart(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** Writes one server-sent event. */
export function sse(res: ServerResponse, data: unknown, event?: string): void {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/**
 * Stops a pane's program as a crash or a reboot would (SIGKILL to its whole process group, no chance to
 * tidy up) and resolves once the host has seen it exit, so that its tab offers a resume.
 */
export async function killPane(t: RealCliThread, pane: Pane): Promise<void> {
  const id = pane.agent.id;
  const exited = new Promise<void>((resolve) => {
    const sub = t.host.roster.onExit.event((e) => {
      if (e.agentId === id) {
        sub.dispose();
        resolve();
      }
    });
  });
  process.kill(-pane.agent.pid!, 'SIGKILL');
  await exited;
  expect(t.host.roster.agents().find((a) => a.id === id)).toMatchObject({ status: 'exited', resumable: true });
}

/** The command line a process runs (Linux): the one the profile gave the pane. */
export function argvOf(pid: number): string[] {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
}

/** How often `settledArgv` reads a new process's command line. */
const ARGV_POLL_MS = 50;

/**
 * A just-launched process's command line once it has one: read at once, a pane's pid can still be between
 * fork and exec (an empty or a passing cmdline) on a loaded machine. Settled means the same twice running.
 */
export async function settledArgv(pid: number, timeoutMs = 10_000): Promise<string[]> {
  const t0 = Date.now();
  let last = '';
  for (;;) {
    const now = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (now && now === last) return now.split('\0').slice(0, -1);
    if (Date.now() - t0 > timeoutMs) throw new Error(`pid ${pid} has no settled command line after ${timeoutMs} ms (last: ${JSON.stringify(now)})`);
    last = now;
    await new Promise((r) => setTimeout(r, ARGV_POLL_MS));
  }
}

/** Gemini CLI 0.61 takes an Enter within 40 ms of a paste it cannot trust for a newline in the message
 *  (a guard against pasted text sending itself), and its key handler sees the guard lifted only once React has
 *  rendered again, which on a busy machine took more than 80 ms. A person's Enter comes later still. */
export const GEMINI_PASTE_GUARD_MS = 500;

/** How often `untilSaved` looks at the CLI's files: a CLI saves within a few hundred ms of a turn. */
const SAVED_POLL_MS = 100;

/**
 * Resolves once a file under `dir` (searched recursively) whose path matches `name` contains `text`: the CLI
 * has saved that part of the conversation. A kill -9 before then loses it, which is the CLI's own behaviour
 * and not what a resume test is about.
 */
export async function untilSaved(dir: string, name: RegExp, text: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const files = fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => name.test(f)) : [];
    for (const f of files) {
      const path = join(dir, f);
      if (fs.statSync(path).isFile() && fs.readFileSync(path, 'utf8').includes(text)) return path;
    }
    if (Date.now() > deadline) throw new Error(`no file matching ${name} under ${dir} saved "${text}" within ${timeoutMs} ms (files: ${files.join(', ') || 'none'})`);
    await new Promise((r) => setTimeout(r, SAVED_POLL_MS));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Agent states

type StateEvent = EventOf<'agent-state'>;

/** One agent-state event with the moment (performance.now()) it reached the host. */
export interface StateSeen {
  e: StateEvent;
  at: number;
}

export interface StateRecord {
  /** Every agent-state event since the record began, in order. */
  readonly all: StateSeen[];
  /** Resolves with the first recorded state (past or to come) that matches; rejects after timeoutMs. Waits on
   *  board events, not on the screen: a hook's report may come after the pane's last output. */
  until(match: (s: StateSeen) => boolean, timeoutMs: number, what: string): Promise<StateSeen>;
  /** `state/source` of each, for failure messages. */
  summary(): string;
}

/**
 * Records a Thread's agent-state events from now on, each with the moment it arrived, so a test can compare
 * it with the moment its screen showed a prompt. Begun before the pane launches, it misses none.
 */
export function recordStates(t: RealCliThread): StateRecord {
  const all: StateSeen[] = [];
  const waiters = new Set<() => void>();
  t.host.board.onEvent((e) => {
    if (e.kind !== 'agent-state') return;
    all.push({ e, at: performance.now() });
    for (const w of [...waiters]) w();
  });
  return {
    all,
    until(match, timeoutMs, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = all.find(match);
          if (!found) return;
          finish();
          resolve(found);
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    summary: () => all.map((s) => `${s.e.agentId}: ${s.e.state}/${s.e.source}${s.e.text ? ` "${s.e.text}"` : ''}`).join('\n'),
  };
}
