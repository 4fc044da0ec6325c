import { memo, useMemo, useState } from 'react';
import { UserText } from './UserText.js';
import { filterLog, type LogEntry } from '../state/eventLog.js';
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
  // Renewals are most of the log (every live claim renews every ~30 s) and say nothing new: hidden unless asked.
  const [renewals, setRenewals] = useState(false);
  const [query, setQuery] = useState('');
  const shown = useMemo(() => filterLog(log, { renewals, query }), [log, renewals, query]);
  return (
    <section className="event-log" data-testid="event-log" aria-label="Event log">
      <h2>
        Events <span className="count">{shown.length === log.length ? log.length : `${shown.length} of ${log.length}`}</span>
      </h2>
      <div className="log-filter">
        <input
          type="search"
          data-testid="log-filter"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder="Filter: T-3, shell 2…"
          aria-label="Filter the event log"
        />
        <label className="log-renewals">
          <input type="checkbox" data-testid="log-show-renewals" checked={renewals} onChange={(e) => setRenewals(e.target.checked)} /> renewals
        </label>
      </div>
      <div className="log-scroll">
        <ol className="log-lines">
          {shown.map((e) => (
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
        {/* Titles and notes quoted in it are journal text: controls shown as escapes, the line isolated. */}
        <UserText text={e.summary} />
        {e.repeat > 1 ? <span className="log-repeat"> ×{e.repeat}</span> : null}
      </span>
    </li>
  );
});
