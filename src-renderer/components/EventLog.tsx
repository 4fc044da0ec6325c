import { memo, useEffect, useMemo, useState, type UIEvent } from 'react';
import { UserText } from './UserText.js';
import { filterLog, mergeLines, parseLogQuery, type LogEntry } from '../state/eventLog.js';
import { coverageWords, logCoverage, type TaskLines } from '../state/logHistory.js';
import { useApp, useController } from '../state/hooks.js';

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
/** Scrolled to within this of the top, the panel reads the next older page: about two lines. */
const TOP_SLACK_PX = 32;
/** A task id typed key by key (T-1, T-12, T-123) is read once the typing pauses: each read searches the
 *  journal's kept segments (up to ~100 MB), and a person types a key every ~150–250 ms. */
const TASK_READ_DELAY_MS = 250;

/**
 * One line per board event, newest at the bottom; follows new lines unless scrolled up. The following is done
 * by CSS, not by script: the scroller is a `column-reverse` flex box, whose scroll origin is its bottom, so a
 * line added at the end stays in view with no `scrollHeight` read (a forced layout of the whole page per
 * event); scrolled up, the browser's scroll anchoring keeps the lines being read where they are, and older
 * lines put above them do not move them either.
 *
 * The lines are a run of the board's history, and the panel says which ("the 300 newest of 2,024 events"):
 * older pages are read from the board's store (logHistory.ts) by the Load older button or by scrolling to
 * the top. A filter naming a task id also reads that task's own events from the store, however old.
 */
export function EventLog() {
  const c = useController();
  const log = useApp((s) => s.log);
  const paging = useApp((s) => s.logPaging);
  const head = useApp((s) => s.board?.seq ?? 0);
  const activeKey = useApp((s) => s.activeKey);
  // Renewals are most of the log (every live claim renews every ~30 s) and say nothing new: hidden unless asked.
  const [renewals, setRenewals] = useState(false);
  const [query, setQuery] = useState('');
  const taskId = useMemo(() => parseLogQuery(query).taskIds[0] ?? null, [query]);
  const [task, setTask] = useState<TaskLines | null>(null);
  const [taskLoading, setTaskLoading] = useState(false);

  // A task named in the filter: its own events from the store, so its history older than the lines is there.
  useEffect(() => {
    setTask(null);
    if (!taskId) return;
    let current = true;
    setTaskLoading(true);
    const timer = setTimeout(() => {
      void c.history.taskPage(taskId).then((t) => {
        if (!current) return;
        setTask(t);
        setTaskLoading(false);
      });
    }, TASK_READ_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [c, taskId, activeKey]);

  const lines = useMemo(() => (task && task.taskId === taskId ? mergeLines(log, task.lines) : log), [log, task, taskId]);
  const shown = useMemo(() => filterLog(lines, { renewals, query }), [lines, renewals, query]);
  const cov = logCoverage(log, paging, head);
  const taskMore = !!task && task.taskId === taskId && task.more;

  const loadOlderOfTask = async () => {
    if (!task || taskLoading) return;
    setTaskLoading(true);
    const t = await c.history.taskPage(task.taskId, task);
    setTaskLoading(false);
    if (t) setTask((held) => (held?.taskId === t.taskId ? t : held));
  };
  const loadOlder = () => {
    if (taskMore) void loadOlderOfTask();
    else if (cov.older && !paging.loading) void c.history.loadOlder();
  };
  const onScroll = (e: UIEvent<HTMLDivElement>) => {
    const el = e.currentTarget;
    // column-reverse: scrollTop is 0 at the bottom and grows negative upwards.
    if (el.scrollHeight - el.clientHeight - Math.abs(el.scrollTop) <= TOP_SLACK_PX) loadOlder();
  };

  return (
    <section className="event-log" data-testid="event-log" aria-label="Event log">
      <h2>
        Events <span className="count">{shown.length}</span>
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
      <div className="log-history" data-testid="log-history">
        {/* One count per thing, each saying what it counts (issue 44: "32 OF 37" above "Showing all 37"): the
            title counts the lines shown, this line what was read from the board and what the filters hide. */}
        <span data-testid="log-coverage">
          Read {coverageWords(cov)}
          {shown.length < lines.length ? `; ${(lines.length - shown.length).toLocaleString('en-US')} hidden by ${query ? 'the filter' : 'the renewals box'}` : ''}.
        </span>
        {cov.older ? (
          <button type="button" data-testid="log-load-older" disabled={paging.loading} onClick={() => void c.history.loadOlder()}>
            {paging.loading ? 'Loading…' : 'Load older'}
          </button>
        ) : null}
        {cov.newer > 0 ? (
          <button type="button" data-testid="log-newest" disabled={paging.loading} onClick={() => void c.history.backToNewest()}>
            Back to newest
          </button>
        ) : null}
        {cov.removed ? (
          <span data-testid="log-removed">
            Events before #{cov.removed.seq.toLocaleString('en-US')} ({day.format(cov.removed.at)}) were removed when the journal was compacted (it keeps its newest history only); the
            board still holds what they did.
          </span>
        ) : null}
        {taskId ? (
          <span data-testid="log-task-history">
            {taskLoading && !task ? (
              `Reading ${taskId}'s events…`
            ) : task ? (
              <>
                {taskId}: {task.lines.length.toLocaleString('en-US')} events read from the board{task.more ? '' : ', all it keeps'}.{' '}
                {task.more ? (
                  <button type="button" data-testid="log-task-older" disabled={taskLoading} onClick={() => void loadOlderOfTask()}>
                    Older {taskId} events
                  </button>
                ) : null}
              </>
            ) : null}
          </span>
        ) : null}
      </div>
      {/* Focusable, so the lines can be scrolled from the keyboard (arrows, Page Up/Down) like any list. */}
      <div className="log-scroll" data-testid="log-scroll" tabIndex={0} role="region" aria-label="Event lines, newest at the bottom" onScroll={onScroll}>
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
