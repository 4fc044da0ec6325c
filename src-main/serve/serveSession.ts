import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, as base64url: 256 bits, far beyond guessing at any rate a socket allows. */
const SECRET_BYTES = 32;

const secret = () => randomBytes(SECRET_BYTES).toString('base64url');

/** Whether `given` is `expected`, in time that does not depend on where they differ. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const HOUR_MS = 60 * 60 * 1000;

export const SessionConstants = {
  /** A browser session no window has used for this long is refused: a tab left open over a night away
   *  (a closed laptop, a stopped `serve`) still reconnects the next day; a credential copied out of a
   *  browser that was closed does not keep working. */
  idleMs: 24 * HOUR_MS,
  /** Refused this long after its trade, however much it is used, and its windows are closed: a credential
   *  taken while in use is not good for ever. A week: a tab open all week needs one new link. */
  lifetimeMs: 7 * 24 * HOUR_MS,
  /** Sessions kept at most; the least recently used go first. Each link traded makes one, and a person has
   *  a few browsers, not dozens: a loop trading links cannot grow the host or its `serve.json`. */
  maxSessions: 16,
  /** Hashes of spent codes kept, so a spent link is told from one this host never gave out: each trade spends
   *  one, and a person opens a few links a day; past this many, the oldest is said as never given out, which
   *  is only a less precise word on a link that opens nothing either way. */
  maxPastCodes: 64,
} as const;

/** One browser's session as `serve.json` keeps it: the credential's hash only, so the file opens nothing. */
export interface SavedSession {
  /** SHA-256 of the credential, base64url. */
  hash: string;
  /** Wall-clock ms of its trade. */
  createdAt: number;
  /** Wall-clock ms it was last used: a window opened or closed with it. */
  lastUsedAt: number;
}

/** A live session; `open` counts its windows, which keep it from idling out. */
export interface Session extends SavedSession {
  open: number;
}

const hashOf = (credential: string) => createHash('sha256').update(credential).digest('base64url');

/**
 * The window's credentials and the one-time code that hands one to a browser (src-shared/protocol/serveLink.ts).
 * Every trade of a link's code makes a credential of its own, for that browser only: it expires when unused
 * (SessionConstants.idleMs) and in any case after SessionConstants.lifetimeMs, and a window can revoke the
 * others. Only hashes are kept (and written to `serve.json`): reading the host's state opens no window.
 * Time is the wall clock (`now`), since sessions outlive the process that made them.
 */
export class ServeSessions {
  private code = secret();
  private readonly sessions = new Map<string, Session>();
  /** Hashes of the codes given out and spent (traded, or live in an earlier run), oldest first. */
  private readonly pastCodes: string[];

  constructor(
    private readonly o: {
      now: () => number;
      saved?: readonly SavedSession[];
      /** The hashes `codes()` gave the last run: its live code is spent now too (a new run has a new one). */
      pastCodes?: readonly string[];
      onChange?: (saved: SavedSession[], codes: string[]) => void;
    },
  ) {
    for (const s of o.saved ?? []) this.sessions.set(s.hash, { ...s, open: 0 });
    this.pastCodes = [...(o.pastCodes ?? [])].slice(-SessionConstants.maxPastCodes);
    this.prune();
  }

  /** The code the next link carries. */
  get linkCode(): string {
    return this.code;
  }

  /** Spends the live code if `given` is it, and makes a new session: its credential, once; null otherwise. */
  redeem(given: string): string | null {
    if (!sameSecret(given, this.code)) return null;
    this.spend(hashOf(this.code));
    this.code = secret();
    const credential = secret();
    const now = this.o.now();
    this.sessions.set(hashOf(credential), { hash: hashOf(credential), createdAt: now, lastUsedAt: now, open: 0 });
    this.prune();
    this.changed();
    return credential;
  }

  /** Whether `given` is a code this host gave out that is spent: used, or the live code of an earlier run. A
   *  lookup of the hash of what was sent: nothing about any live code or credential is compared. */
  wasSpent(given: string): boolean {
    return this.pastCodes.includes(hashOf(given));
  }

  /** The codes' hashes for the next run to know: the spent ones and the live one (which a restart spends). */
  codes(): string[] {
    return [...this.pastCodes, hashOf(this.code)].slice(-SessionConstants.maxPastCodes);
  }

  private spend(hash: string): void {
    this.pastCodes.push(hash);
    if (this.pastCodes.length > SessionConstants.maxPastCodes) this.pastCodes.shift();
  }

  /** The live session `credential` opens, or null (unknown, revoked, idle too long, past its lifetime). */
  find(credential: string | null | undefined): Session | null {
    if (!credential) return null;
    const s = this.sessions.get(hashOf(credential));
    return s && this.live(s, this.o.now()) ? s : null;
  }

  /** A window opened or closed with `s`: it is in use, so its idle time starts again. */
  opened(s: Session): void {
    s.open++;
    this.used(s);
  }

  closed(s: Session): void {
    s.open = Math.max(0, s.open - 1);
    this.used(s);
  }

  /** Ends every session but `keep`: the sessions ended, whose windows the caller closes. */
  revokeOthers(keep: Session): Session[] {
    const gone = [...this.sessions.values()].filter((s) => s !== keep);
    for (const s of gone) this.sessions.delete(s.hash);
    if (gone.length) this.changed();
    return gone;
  }

  /** Ends `s` itself. */
  revoke(s: Session): void {
    if (this.sessions.delete(s.hash)) this.changed();
  }

  /** Ends every session (the sessions were for another address: a restart on another port). */
  clear(): void {
    if (this.sessions.size === 0) return;
    this.sessions.clear();
    this.changed();
  }

  /** Sessions past their lifetime or idle time, dropped now: those with windows open get them closed. */
  expire(): Session[] {
    const now = this.o.now();
    const gone = [...this.sessions.values()].filter((s) => !this.live(s, now));
    for (const s of gone) this.sessions.delete(s.hash);
    if (gone.length) this.changed();
    return gone;
  }

  /** How many sessions there are. */
  get size(): number {
    return this.sessions.size;
  }

  saved(): SavedSession[] {
    return [...this.sessions.values()].map(({ hash, createdAt, lastUsedAt }) => ({ hash, createdAt, lastUsedAt }));
  }

  private live(s: Session, now: number): boolean {
    if (now - s.createdAt >= SessionConstants.lifetimeMs) return false;
    return s.open > 0 || now - s.lastUsedAt < SessionConstants.idleMs;
  }

  private used(s: Session): void {
    s.lastUsedAt = Math.max(s.lastUsedAt, this.o.now());
    this.changed();
  }

  /** The dead ones out, then the least recently used beyond the cap. */
  private prune(): void {
    const now = this.o.now();
    for (const s of this.sessions.values()) if (!this.live(s, now)) this.sessions.delete(s.hash);
    // A session with a window open is never the one to go: its window would be cut off for another's link.
    const idle = [...this.sessions.values()].filter((s) => s.open === 0).sort((a, b) => a.lastUsedAt - b.lastUsedAt);
    for (const s of idle.slice(0, Math.max(0, this.sessions.size - SessionConstants.maxSessions))) this.sessions.delete(s.hash);
  }

  /** Also called once the server listens, so the live code's hash is kept before any link is printed. */
  changed(): void {
    this.o.onChange?.(this.saved(), this.codes());
  }
}

/** The cookie that carries a browser's credential. Its host is the server's own name (serveState's
 *  `forkbench-….localhost`), so no other server, on any port of 127.0.0.1 or localhost, is ever sent it. */
export const SESSION_COOKIE = 'forkbench';

/** Set-Cookie for a browser's credential: host-only (no Domain), never to a script, nor with a request another
 *  site starts. No Max-Age: the browser keeps it in memory only, never on disk; the host ends it by time. */
export function sessionCookie(credential: string): string {
  return `${SESSION_COOKIE}=${credential}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Every value a Cookie header gives the session cookie (a browser may send more than one of a name). */
export function credentialsIn(cookieHeader: string | undefined): string[] {
  const out: string[] = [];
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) out.push(part.slice(eq + 1).trim());
  }
  return out;
}
