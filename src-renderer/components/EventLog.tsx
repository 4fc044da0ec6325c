import { memo } from 'react';
import type { LogEntry } from '../state/eventLog.js';
import { useApp } from '../state/hooks.js';

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

/**
 * One line per board event, newest at the bottom; follows new lines unless scrolled up. The following is done
 * by CSS, not by script: the scroller is a `column-reverse` flex box, whose scroll origin is its bottom, so a
 * line added at the end stays in view with no `scrollHeight` read (a forced layout of the whole page per
 * event); scrolled up, the browser's scroll anchoring keeps the lines being read where they are.
 */
export function EventLog() {
  const log = useApp((s) => s.log);
  return (
    <section className="event-log" data-testid="event-log" aria-label="Event log">
      <h2>
        Events <span className="count">{log.length}</span>
      </h2>
      <div className="log-scroll">
        <ol className="log-lines">
          {log.map((e) => (
            <LogLine key={e.seq} entry={e} />
          ))}
        </ol>
      </div>
    </section>
  );
}

/** Entries never change once made, so a new line does not re-render the 499 before it. */
const LogLine = memo(function LogLine({ entry: e }: { entry: LogEntry }) {
  return (
    <li className={`log-entry kind-${e.kind}${e.code ? ' rejected' : ''}`} data-testid="log-entry" data-kind={e.kind} data-code={e.code ?? undefined}>
      <time dateTime={new Date(e.at).toISOString()}>{time.format(e.at)}</time>
      <span className="log-kind">{e.kind}</span>
      <span className="log-summary">
        {e.summary}
        {e.repeat > 1 ? <span className="log-repeat"> ×{e.repeat}</span> : null}
      </span>
    </li>
  );
});
