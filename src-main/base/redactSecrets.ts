/**
 * Text bound for a log with the credentials in it replaced. Logs keep command lines (a refused greeting's
 * process, a pane that could not start) and those may carry a URL with a password in it, the shared board's
 * above all: a log is read by whoever reads the data folder, agents included, long after the process is gone.
 */

/** What a URL with credentials becomes: its scheme stays, so a reader still sees what kind of address it was. */
export const REDACTED = '…redacted…';

/**
 * Every URL that carries a user or password (`scheme://user:pass@host/…`, `scheme://token@host`) replaced by
 * `scheme://…redacted…` up to the next space, and every `password=` setting's value by `…redacted…`. The
 * whole URL goes, not just its password: an unescaped '@' or ':' in a password makes where it ends a guess.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@\S*/gi, `$1${REDACTED}`)
    .replace(/(\bpassword=)[^&\s]*/gi, `$1${REDACTED}`);
}
