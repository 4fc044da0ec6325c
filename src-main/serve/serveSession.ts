import { randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, as base64url: 256 bits, far beyond guessing at any rate a socket allows. */
const SECRET_BYTES = 32;

const secret = () => randomBytes(SECRET_BYTES).toString('base64url');

/** Whether `given` is `expected`, in time that does not depend on where they differ. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The window's credential and the one-time code that hands it to a browser (src-shared/protocol/serveLink.ts).
 * The credential never appears in a link: the printed link holds only the code, which is spent the first time
 * it is traded, whereupon a new one is made for the next browser.
 */
export class ServeSession {
  /** What the window's cookie holds, and what every WebSocket must present. */
  readonly token: string;
  private code = secret();

  constructor(token?: string) {
    this.token = token ?? secret();
  }

  /** The code the next link carries. */
  get linkCode(): string {
    return this.code;
  }

  /** Spends the live code if `given` is it: true once, after which a new code is live. */
  redeem(given: string): boolean {
    if (!sameSecret(given, this.code)) return false;
    this.code = secret();
    return true;
  }

  /** The cookie's name: one per port, since a browser keeps cookies per host name, not per port, and two
   *  `serve`s on one machine must not overwrite each other's. */
  static cookieName(port: number): string {
    return `forkbench-${port}`;
  }

  /** Set-Cookie for the window: sent back on this host name only, never to a script, nor with a request
   *  another site starts. No expiry: the browser drops it when it quits. */
  setCookie(port: number): string {
    return `${ServeSession.cookieName(port)}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** Whether a request's Cookie header carries the credential. */
  admits(cookieHeader: string | undefined, port: number): boolean {
    const name = ServeSession.cookieName(port);
    for (const part of (cookieHeader ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === name && sameSecret(part.slice(eq + 1).trim(), this.token)) return true;
    }
    return false;
  }
}
