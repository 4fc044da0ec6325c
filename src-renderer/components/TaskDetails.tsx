import { useEffect, useRef, useState } from 'react';
import type { BoardEvent } from '../../src-shared/board/events.js';
import type { Task } from '../../src-shared/board/model.js';
import type { TaskDetails as Details } from '../../src-shared/board/windowBoard.js';
import { summarize } from '../state/eventLog.js';
import { useApp, useController } from '../state/hooks.js';
import { taskStory, type StoryNote } from '../state/taskStory.js';
import { UserText } from './UserText.js';
import { useReturnFocus } from './returnFocus.js';
import { AfterField, WhyList } from './TaskWaits.js';
import { TakersField } from './TaskDispatch.js';
import { TaskCostSection } from './TaskCost.js';


const when = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

/** Open the details panel of a task (the panel itself gives the focus back to where it was on close). */
export function openTaskDetails(c: ReturnType<typeof useController>, taskId: string): void {
  c.store.setState({ detailsTaskId: taskId });
}

/**
 * Everything the board knows about one task, where a person can read it: the notes agents wrote (who and
 * when), the done note, the reasons it was sent back or blocked, its holder and token, its worktree and
 * branch, its attempts, and its history from the board's journal. Opened by a click or Enter on a card;
 * Escape or × closes it and the focus goes back to the card.
 */
export function TaskDetails() {
  const taskId = useApp((s) => s.detailsTaskId);
  return taskId ? <DetailsOf key={taskId} taskId={taskId} /> : null;
}

/** A task's history, fetched anew whenever the task changes (every event about it replaces its object). */
export function useTaskHistory(taskId: string, task: Task | undefined): BoardEvent[] | null {
  const c = useController();
  const key = useApp((s) => s.activeKey);
  const [events, setEvents] = useState<BoardEvent[] | null>(null);
  useEffect(() => {
    if (!key) return;
    let live = true;
    // A panel closed meanwhile has nobody to show the history, or its failure, to.
    void c.call('task.history', { key, taskId }, `read the history of ${taskId}`, { handled: () => !live }).then((h) => {
      if (live && h.ok) setEvents(h.value);
    });
    return () => {
      live = false;
    };
  }, [c, key, taskId, task]);
  return events;
}

/**
 * A task's whole body and notes, which the window's snapshot leaves out (src-shared/board/windowBoard.ts),
 * fetched when the task is opened and again whenever it changes. Null until the first answer.
 */
export function useTaskDetails(taskId: string, task: Task | undefined): Details | null {
  const c = useController();
  const key = useApp((s) => s.activeKey);
  const [details, setDetails] = useState<Details | null>(null);
  useEffect(() => {
    if (!key) return;
    let live = true;
    void c.call('task.details', { key, taskId }, `read ${taskId}`, { handled: () => !live }).then((d) => {
      if (live && d.ok) setDetails(d.value);
    });
    return () => {
      live = false;
    };
  }, [c, key, taskId, task]);
  return details;
}

function DetailsOf({ taskId }: { taskId: string }) {
  const c = useController();
  const task = useApp((s) => s.board?.tasks.get(taskId));
  const events = useTaskHistory(taskId, task);
  const details = useTaskDetails(taskId, task);
  const root = useRef<HTMLDivElement>(null);
  const focus = useReturnFocus();
  useEffect(() => {
    focus.remember();
    root.current?.focus();
    return () => {
      // The card may have been redrawn meanwhile: its new element, by its test id, takes the focus.
      if (!focus.restore()) document.querySelector<HTMLElement>(`[data-testid="card-${taskId}"]`)?.focus();
    };
  }, [taskId, focus]);
  const close = () => c.store.setState({ detailsTaskId: null });
  const name = (id: string) => c.agentName(id);
  if (!task) {
    return (
      <div className="details" ref={root} tabIndex={-1} role="dialog" aria-label={`Task ${taskId}`} data-testid="task-details" onKeyDown={(e) => e.key === 'Escape' && close()}>
        <p className="muted">{taskId} is no longer on the board.</p>
      </div>
    );
  }
  const story = events ? taskStory(events) : null;
  return (
    <div
      className="details"
      ref={root}
      tabIndex={-1}
      role="dialog"
      aria-labelledby="details-title"
      data-testid="task-details"
      data-task={taskId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          close();
        }
      }}
    >
      <header className="details-head">
        <span className="card-id">{task.id}</span>
        <h2 className="details-title" id="details-title">
          <UserText text={task.title} oneLine />
        </h2>
        <button type="button" className="dismiss" aria-label="Close details" data-testid="details-close" onClick={close}>
          ×
        </button>
      </header>
      <dl className="details-facts">
        <dt>State</dt>
        <dd data-testid="details-state">{task.state}</dd>
        <dt>Waits on</dt>
        <dd>
          <AfterField taskId={taskId} />
        </dd>
        <dt>Taken by</dt>
        <dd>
          <TakersField taskId={taskId} />
        </dd>
        {task.claim && (
          <>
            <dt>Holder</dt>
            <dd data-testid="details-holder">
              {name(task.claim.agentId)} <span className="muted">since {when.format(task.claim.grantedAtWall)}</span>
            </dd>
            <dt>Token</dt>
            <dd data-testid="details-token">
              <code>{task.claim.token}</code>
            </dd>
          </>
        )}
        {!task.claim && task.lastClaim && (
          <>
            <dt>Last claim</dt>
            <dd>
              {name(task.lastClaim.agentId)}, token <code>{task.lastClaim.token}</code>, ended: {task.lastClaim.reason}
            </dd>
          </>
        )}
        {task.copiedFrom && (
          <>
            <dt>Copied from</dt>
            <dd data-testid="details-copied-from">{task.copiedFrom.taskId} on the board this Thread moved from</dd>
          </>
        )}
        <dt>Attempts</dt>
        <dd data-testid="details-attempts">
          {task.attempts}
          {task.failures > 0 ? `, ${task.failures} ended involuntarily` : ''}
        </dd>
        {task.worktree && (
          <>
            <dt>Branch</dt>
            <dd>
              <code className="branch" data-testid="details-branch">
                {task.worktree.branch}
              </code> <span className="muted">from {task.worktree.base}</span>
            </dd>
            <dt>Worktree</dt>
            <dd>
              <code className="path" data-testid="details-worktree">
                {task.worktree.path}
              </code>
            </dd>
          </>
        )}
        {task.verify && (
          <>
            <dt>Verify</dt>
            <dd>
              <code>
                <UserText text={task.verify} />
              </code>
            </dd>
          </>
        )}
      </dl>
      <TaskCostSection taskId={taskId} events={events} now={Date.now()} />
      <section className="details-section">
        <h3>Why it is not running</h3>
        <WhyList taskId={taskId} />
      </section>
      {details === null ? (
        <p className="muted" data-testid="details-loading">
          Reading {taskId}…
        </p>
      ) : (
        details.body && (
          <p className="details-body" data-testid="details-body">
            <UserText text={details.body} />
          </p>
        )
      )}
      {task.state === 'blocked' && task.blockedReason && (
        <p className="card-reason" data-testid="details-blocked">
          blocked: <UserText text={task.blockedReason} />
        </p>
      )}
      {story?.doneNote && (
        <section className="details-section" data-testid="details-done-note">
          <h3>Done note</h3>
          <NoteLine note={story.doneNote} name={name} />
        </section>
      )}
      {story && story.reasons.length > 0 && (
        <section className="details-section" data-testid="details-reasons">
          <h3>Sent back or blocked</h3>
          <ul>
            {story.reasons.map((r, i) => (
              <li key={i}>
                <NoteLine note={r} name={name} prefix={r.kind === 'returned' ? 'rejected' : 'blocked'} />
              </li>
            ))}
          </ul>
        </section>
      )}
      <section className="details-section">
        <h3>
          Notes <span className="count">{details ? details.olderNotes + details.notes.length : noteCount(task)}</span>
        </h3>
        {details === null ? null : details.notes.length === 0 ? (
          <p className="muted">No notes yet.</p>
        ) : (
          <ul data-testid="details-notes">
            {details.olderNotes > 0 && (
              <li className="muted" data-testid="details-older-notes">
                {details.olderNotes} older notes are not shown.
              </li>
            )}
            {details.notes.map((n, i) => (
              <li key={i} data-testid="details-note">
                <NoteLine note={n} name={name} />
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="details-section">
        <h3>History</h3>
        {events === null ? (
          <p className="muted">Reading the board’s journal…</p>
        ) : (
          <ol className="details-history" data-testid="details-history">
            {events.map((e) => (
              <li key={e.seq}>
                <time dateTime={new Date(e.at).toISOString()}>{when.format(e.at)}</time> <UserText text={summarize(e, name)} />
              </li>
            ))}
          </ol>
        )}
      </section>
    </div>
  );
}

/** How many notes a task has, counting those its window's snapshot left out. */
export function noteCount(task: Task): number {
  return (task.omitted?.notes ?? 0) + task.notes.length;
}

function NoteLine({ note, name, prefix }: { note: StoryNote; name: (id: string) => string; prefix?: string }) {
  return (
    <div className="note-line">
      <div className="note-meta">
        {prefix ? `${prefix} by ` : ''}
        <strong data-testid="note-author">{name(note.by)}</strong> · <time dateTime={new Date(note.at).toISOString()}>{when.format(note.at)}</time>
      </div>
      <div className="note-text" data-testid="note-text">
        <UserText text={note.text} />
      </div>
    </div>
  );
}

/** The done note in the review dialog, beside the diff it is about. */
export function ReviewDoneNote({ taskId }: { taskId: string }) {
  const c = useController();
  const task = useApp((s) => s.board?.tasks.get(taskId));
  const events = useTaskHistory(taskId, task);
  const note = events ? taskStory(events).doneNote : null;
  if (!events) return null;
  return (
    <p className="review-done-note" data-testid="diff-done-note">
      {note ? (
        <>
          <strong>{c.agentName(note.by)}</strong> said done: <span className="note-text">
            <UserText text={note.text} />
          </span>
        </>
      ) : (
        <span className="muted">No note came with done.</span>
      )}
    </p>
  );
}
