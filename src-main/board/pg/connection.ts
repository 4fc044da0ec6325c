/**
 * The board's PostgreSQL connection: where its URL comes from, how it is checked and named in messages, and the
 * pool the board uses. A board URL may carry a password, and what a host prints reaches windows, logs and agents'
 * terminals, so nothing here ever puts the URL itself in a message: messages name "host/database" only
 * (describeBoardUrl), and anything that may hold a URL goes through redactUrl first.
 *
 * Also the board's name (boardNameFor): by default the folder's git remote, so two clones of one repository on
 * two machines meet on one board with no setting.
 */
import { execFile } from 'node:child_process';
import { basename, resolve } from 'node:path';
import pg from 'pg';

/** The variable a host may take the board's URL from (boardUrlSource.ts: read once, then deleted). */
export const BOARD_URL_ENV = 'FORKBENCH_BOARD_URL';
/** A URL longer than this is a mistake (a pasted file), not a connection string; real ones are ~100 chars. */
const MAX_URL_LENGTH = 4096;
/** A board name's bounds: long enough for any git remote URL people use, short enough to show in a window. */
export const MAX_BOARD_NAME = 200;
/**
 * How long the first connection may take before the start fails. pg's default is to wait forever, which an
 * address that drops packets (a firewall, a VPN that is down) turns into a host that hangs at start.
 */
export const CONNECT_TIMEOUT_MS = 10_000;
/** How long `git config` may take to name the board; it reads one file, so this only bounds a stuck git. */
const GIT_TIMEOUT_MS = 10_000;
/** Seen by the database's administrator in pg_stat_activity: which sessions are Forkbench's. */
const APPLICATION_NAME = 'forkbench';

/** A board URL or name that cannot be used: a usage error, shown as it is (it never holds the URL). */
export class BoardUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BoardUrlError';
  }
}

/** The database could not be opened at start: one line naming host and database and why, never a password. */
export class BoardConnectError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BoardConnectError';
  }
}

const URL_SHAPE = 'postgres://[user[:password]@]host[:port]/database';

export interface BoardUrl {
  /** A host name, an address, or a Unix socket folder (from `?host=/path`). */
  readonly host: string;
  readonly port: number | null;
  readonly database: string;
}

/**
 * Checks a board URL and returns where it points. Throws BoardUrlError for anything that is not a PostgreSQL
 * URL naming a database; the message never repeats the value given (it may hold a password).
 */
export function parseBoardUrl(url: string): BoardUrl {
  if (url.length > MAX_URL_LENGTH) throw new BoardUrlError(`the board URL is ${url.length} characters long: expected ${URL_SHAPE}`);
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'postgres' && scheme !== 'postgresql') {
    // Only the scheme is repeated back: the rest may be a password pasted in the wrong place.
    throw new BoardUrlError(`the board must be a PostgreSQL URL, ${URL_SHAPE}${scheme ? ` (this one is ${scheme}:)` : ''}`);
  }
  if (!/^[a-z]+:\/\//i.test(url)) throw new BoardUrlError(`the board URL does not parse: expected ${URL_SHAPE}`);
  let u: URL;
  try {
    u = whatwg(url);
  } catch {
    throw new BoardUrlError(`the board URL does not parse: expected ${URL_SHAPE}`);
  }
  let database: string;
  try {
    database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  } catch {
    throw new BoardUrlError(`the board URL's database name is badly escaped: expected ${URL_SHAPE}`);
  }
  if (!database) throw new BoardUrlError(`the board URL names no database: expected ${URL_SHAPE}`);
  if (database.includes('/')) throw new BoardUrlError(`the board URL's database name holds a '/': expected ${URL_SHAPE}`);
  // An empty host is pg's default, localhost (whatwg() spelled it out); `?host=` wins, as in pg.
  const host = u.searchParams.get('host') || u.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = u.port ? Number(u.port) : null;
  return { host, port, database };
}

/**
 * The URL as WHATWG's parser takes it. PostgreSQL allows an empty host (`postgres://user@/db?host=/socket/dir`,
 * `postgres:///db`), meaning pg's default, localhost; WHATWG URLs do not, so it is spelled out.
 */
function whatwg(url: string): URL {
  return new URL(url.replace(/^([a-z]+:\/\/)((?:[^/?#@]*@)?)(?=[/?#]|$)/i, '$1$2localhost'));
}

/** "host/database" (or "host:port/database") for messages: never the user or password. */
export function describeBoardUrl(url: string): string {
  const { host, port, database } = parseBoardUrl(url);
  const h = host.includes(':') && !host.startsWith('/') ? `[${host}]` : host;
  return `${h}${port !== null ? `:${port}` : ''}/${database}`;
}

/**
 * Any text with the passwords of the PostgreSQL URLs in it replaced by `***`: the `user:password@` part (up to
 * the last '@' before the host, as URL parsers read an unescaped '@' in a password) and a `password=` parameter. For anything that might print a URL (an error from a library, a setting shown back).
 */
export function redactUrl(text: string): string {
  return text
    .replace(/(postgres(?:ql)?:\/\/[^:@/?#\s]*):[^/?#\s]*@/gi, '$1:***@')
    .replace(/([?&;\s]password=)[^&\s]*/gi, '$1***');
}

export interface PoolOptions {
  /** Connections kept open at most (pg's default is 10). */
  readonly max?: number;
  readonly connectTimeoutMs?: number;
  /**
   * Told when an idle pooled connection dies (the server restarted, the network dropped it). Without a listener
   * pg's 'error' event would crash the process; the next query that needs a connection fails and reports it.
   */
  readonly onIdleError?: (err: Error) => void;
}

/**
 * A pool on the board's database. Integers stay exact: pg returns int8 (bigint: the board's tokens, positions,
 * counts) as strings by default and this never installs a parser that would turn them into JS numbers, which
 * lose precision past 2^53. The pool is per connection string, so setting no global type parser keeps it so.
 */
export function connectPool(url: string, opts: PoolOptions = {}): pg.Pool {
  parseBoardUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    // A board's transaction sends its statements in two round trips (boardSql.inOrder), not one each, and
    // the board is locked for every host meanwhile. Statements awaited one by one are sent as before.
    pipeline: true,
    ...(opts.max !== undefined ? { max: opts.max } : {}),
  });
  pool.on('error', (err) => opts.onIdleError?.(err));
  // pg-pool listens for a connection's errors only while it is idle in the pool: one lost while handed out
  // (a database restart between two statements) would be an uncaught 'error' and end the host. The next
  // statement on it fails and says so; the event itself has nothing to add.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** A connection of its own on the board's database (LISTEN needs one), made as the pool's are. */
export function connectClient(url: string): pg.Client {
  return new pg.Client({ connectionString: url, application_name: APPLICATION_NAME, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
}

/**
 * A pool that has connected once: a host starts on PostgreSQL only if the database answers. On failure the pool
 * is closed (nothing half-started) and one line says where and why: "cannot open the board at host/db: cause".
 */
export async function openCheckedPool(url: string, opts: PoolOptions = {}): Promise<pg.Pool> {
  const where = describeBoardUrl(url);
  const pool = connectPool(url, opts);
  try {
    const client = await pool.connect();
    try {
      await client.query('SELECT 1');
    } finally {
      // Closed, not kept: every connection the board uses is made after its owner set it up (PgBoard sets
      // each one's session settings as it connects).
      client.release(true);
    }
    return pool;
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new BoardConnectError(`cannot open the board at ${where}: ${causeOf(err, url, opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS)}`, { cause: err });
  }
}

/** Why a connection failed, in a person's words, on one line, with no password in it. */
function causeOf(err: unknown, url: string, timeoutMs: number): string {
  const e = err as { code?: string; message?: string };
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused (is PostgreSQL running and listening there?)';
    case 'ENOENT':
      // A Unix socket folder with no server socket in it.
      return 'connection refused (no PostgreSQL server socket in that folder)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'no such host';
    case 'ETIMEDOUT':
      return `timed out after ${timeoutMs / 1000} s`;
    case '3D000':
      return 'no such database';
    case '28P01':
    case '28000':
      return 'authentication failed (check the user and password)';
    case '57P03':
      return 'the server is starting up or shutting down';
    case '53300':
      return 'the server has no free connection slots';
  }
  const message = e.message ?? String(err);
  if (/timeout expired|timeout exceeded|connection timeout/i.test(message)) return `timed out after ${timeoutMs / 1000} s`;
  // pg's own words when the server asks for a password the URL does not hold.
  if (/password must be a string|SASL|SCRAM/i.test(message)) return 'authentication failed (the server wants a password)';
  return oneLine(hidePassword(redactUrl(message), url));
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** The URL's own password, wherever a message might repeat it: a library may quote it outside any URL. */
function hidePassword(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(whatwg(url).password);
  } catch {
    // Unparsable: parseBoardUrl refused it before any connection, so no message comes here with it.
  }
  return password ? text.split(password).join('***') : text;
}

/**
 * The board's name for a Thread folder: `--board-name` if given (checked), else the folder's git remote
 * (origin's URL, any credentials in it removed), else the folder's own name.
 */
export async function boardNameFor(folder: string, override?: string): Promise<string> {
  if (override !== undefined) return checkBoardName(override);
  const remote = await originUrl(folder);
  if (remote !== null) {
    const name = withoutCredentials(remote);
    if (isBoardName(name)) return name;
  }
  return basename(resolve(folder));
}

/** A valid `--board-name`: 1–200 printable characters, no surrounding spaces. `field` names where it was
 *  typed (the command line's flag, or the window's field) so the refusal speaks of what the person sees. */
export function checkBoardName(name: string, field = '--board-name'): string {
  if (!isBoardName(name)) {
    throw new BoardUrlError(`${field} takes 1 to ${MAX_BOARD_NAME} printable characters with no leading or trailing space`);
  }
  return name;
}

function isBoardName(name: string): boolean {
  const length = [...name].length;
  // \p{C}: control, format (bidi overrides), surrogate, private-use and unassigned: nothing a window can show as is.
  return length >= 1 && length <= MAX_BOARD_NAME && !/\p{C}/u.test(name) && name.trim() === name;
}

/**
 * `https://user:token@host/x.git` → `https://host/x.git`: a token in a remote (GitHub's `https://TOKEN@…`
 * included) must not become a name every host shows; and two clones, one with a token and one without, meet.
 */
export function withoutCredentials(remote: string): string {
  return remote.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');
}

/**
 * origin's URL, or null (not a repository, no origin, no git). Run directly rather than through src-main/git,
 * which sits above the board (scripts/check-layers.mjs); git's hook variables are dropped so a host started from
 * a hook reads this folder's config, not the hook's repository.
 */
function originUrl(folder: string): Promise<string | null> {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_INDEX_FILE', 'GIT_PREFIX', 'GIT_OBJECT_DIRECTORY']) delete env[k];
  return new Promise((done) => {
    execFile('git', ['-C', folder, 'config', '--get', 'remote.origin.url'], { env, timeout: GIT_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout) => {
      const url = stdout.trim();
      done(err || !url ? null : url);
    });
  });
}
