import { memo, useCallback, useState, type FormEvent, type ReactNode } from 'react';
import { useDraggable } from '@dnd-kit/core';
import type { Task, TaskState } from '../../src-shared/board/model.js';
import { USER } from '../../src-shared/board/model.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { UserText } from './UserText.js';
import { agentLabel } from '../state/agentList.js';
import { countsDown } from '../state/boardState.js';
import { sentBackOf, shortReason, showsLapsed } from '../state/cardMarks.js';
import { CAUSE_WORDS } from '../state/eventLog.js';
import { firstOver, limitState, TEXT_LIMITS } from '../state/textLimit.js';
import { useApp, useController } from '../state/hooks.js';
import { claimLeaseMs } from '../state/claimLease.js';
import { Countdown } from './Countdown.js';
import { AssignMenu } from './AssignMenu.js';
import { askConfirm } from './confirm.js';
import { AgentStateBadge } from './AgentStateBadge.js';
import { askText } from './prompt.js';
import { noteCount, openTaskDetails, useTaskDetails } from './TaskDetails.js';
import { CharCount, LimitReason } from './CharCount.js';
import { CardWaits } from './TaskWaits.js';
import { CostFigure } from './CostFigure.js';
import { CARD_STEP_KEYS, enterActions, followCard, moveInActions, stepCard } from './cardFocus.js';

/** What inside a card keeps its own clicks (a click there does not open the details). */
const CARD_CONTROLS = 'button, input, textarea, select, a, form';
/** A press that moved less than this before it was let go is a click, not a drag. */
const CLICK_SLOP_PX = 4;

export interface DragData {
  taskId: string;
}

/** One task on the board. Selects only its own task and its holder, so other cards' changes pass it by. */
export const TaskCard = memo(function TaskCard({ id }: { id: string }) {
  const task = useApp((s) => s.board?.tasks.get(id));
  const holder = task?.claim?.agentId ?? '';
  // Another host's agent with its host's name: both hosts may have a "shell 1".
  const holderName = useApp((s) => (holder ? (s.agents[holder] ? agentLabel(s.agents[holder]) : holder) : ''));
  // Work in review waits for the person, not for its agent: its holder's silence is no stall there.
  const stalled = useApp((s) => (holder && task?.state !== 'review' ? s.agents[holder]?.status === 'stalled' : false));
  const leaseMs = useApp((s) => claimLeaseMs(s, holder));
  const [editing, setEditing] = useState(false);
  if (!task) return null;
  // A review card waits for a person: never LAPSED there (cardMarks.ts).
  const lapsed = showsLapsed(task);
  // Text from the journal is shown, never obeyed: controls as escapes (older journals may hold them), and
  // each piece of user text isolated (<bdi>), so a right-to-left title cannot reorder the id beside it.
  const title = showControls(task.title, 'none');
  const sentBack = sentBackOf(task);
  return (
    <DraggableCard
      id={id}
      label={`${id}: ${title}`}
      className={`card state-${task.state}${lapsed ? ' lapsed' : ''}${stalled ? ' stalled' : ''}${editing ? ' editing' : ''}`}
      state={task.state}
      holder={holder}
    >
      <header className="card-head">
        <span className="drag-grip" data-testid={`drag-${id}`} title="Drag onto an agent's tab to assign, onto Open to release" aria-hidden="true">
          ⠿
        </span>
        <span className="card-id">{id}</span>
        <bdi className="card-title" data-testid={`card-title-${id}`}>
          {title}
        </bdi>
      </header>
      {lapsed && (
        <span className="lapsed-mark" data-testid={`lapsed-${id}`} title="The last claim's lease ran out">
          lapsed
        </span>
      )}
      {sentBack?.cause && (
        // The merge queue's send-back is its own outcome (issue 44): a conflict is a conflict, never "lapsed".
        <span className={`sent-back-mark cause-${sentBack.cause}`} data-testid={`sent-back-mark-${id}`} title="The merge queue sent the approved work back">
          {CAUSE_WORDS[sentBack.cause]}
        </span>
      )}
      {editing ? (
        <EditForm task={task} onDone={() => setEditing(false)} />
      ) : (
        task.body && (
          <p className="card-body">
            <UserText text={task.omitted?.bodyChars ? `${task.body}…` : task.body} />
          </p>
        )
      )}
      {/* In review the task waits for a person, not for its agent: no lease countdown to read as a deadline
          (the agent's tab follows the same rule). */}
      {task.claim && countsDown(task) && (
        <Countdown deadline={task.claim.deadline} leaseMs={leaseMs} stalled={stalled} testId={`countdown-${id}`} variant="bar" />
      )}
      <div className="card-meta">
        {task.copiedFrom && (
          // A task carried from the Thread's local board when it moved here (issue 45): its id there.
          <span className="card-copied" data-testid={`card-copied-${id}`} title={`Copied from another board, where it was ${task.copiedFrom.taskId}`}>
            was {task.copiedFrom.taskId}
          </span>
        )}
        {task.worktree && (
          <span className="card-branch" data-testid={`card-branch-${id}`} title={`${task.worktree.path} (from ${task.worktree.base})`}>
            {task.worktree.branch}
          </span>
        )}
        {holder && (
          <span className="holder" title={holder}>
            {holderName}
            <AgentStateBadge agentId={holder} testId={`card-agent-state-${id}`} />
          </span>
        )}
        <span className="meta-count" title="times granted">
          attempts {task.attempts}
        </span>
        <span className="meta-count" title="notes">
          notes {noteCount(task)}
        </span>
        {/* Issue 47: what it cost so far; absent before anything was spent. */}
        <CostFigure taskId={id} testId={`card-cost-${id}`} />
      </div>
      {task.state === 'blocked' && task.blockedReason && (
        <p className="card-reason" data-testid={`card-blocked-${id}`}>
          blocked: <UserText text={task.blockedReason} />
        </p>
      )}
      <CardWaits taskId={id} />
      {sentBack && (
        // Why its work came back from review, for whoever works on it next (the details panel has every one).
        <p className="card-reason" data-testid={`card-sent-back-${id}`} title={showControls(sentBack.reason, 'tab-newline')}>
          {sentBack.cause ? CAUSE_WORDS[sentBack.cause] : sentBack.by === USER ? 'rejected' : `rejected by ${sentBack.by}`}
          {sentBack.reason ? (
            <>
              : <bdi>{shortReason(showControls(sentBack.reason, 'tab-newline'))}</bdi>
            </>
          ) : null}
        </p>
      )}
      <CardActions task={task} editing={editing} onEdit={() => setEditing((e) => !e)} />
    </DraggableCard>
  );
});

interface DraggableCardProps {
  id: string;
  label: string;
  className: string;
  state: TaskState;
  holder: string;
  children: ReactNode;
}

/**
 * The card's box and drag source: the only part of a card that reads dnd-kit's context, which changes for
 * every card when a drag starts, moves over another target, or ends. Re-rendering it draws this one element:
 * the card's content is `children`, made by TaskCard, and React skips an element it has already drawn.
 */
function DraggableCard({ id, label, className, state, holder, children }: DraggableCardProps) {
  const { attributes, listeners, setNodeRef, setActivatorNodeRef, isDragging } = useDraggable({
    id: `task:${id}`,
    data: { taskId: id } satisfies DragData,
    // The card's role (below) told to dnd-kit too: with its default, a button, it marks a card being dragged
    // aria-pressed, which an article may not carry (axe: aria-allowed-attr, during every keyboard drag).
    attributes: { role: 'article' },
  });
  const ref = useCallback(
    (el: HTMLElement | null) => {
      setNodeRef(el);
      setActivatorNodeRef(el);
    },
    [setNodeRef, setActivatorNodeRef],
  );
  const c = useController();
  return (
    // The whole card is the drag handle (buttons and fields inside it excepted, see CardPointerSensor);
    // focused, Space picks it up, arrows move between drop targets, Space drops, Escape cancels. A click
    // that is no drag, or Enter, opens the task's details.
    <article
      ref={ref}
      {...listeners}
      {...attributes}
      // Not onClick: a press starts a drag at once (CardPointerSensor has no activation distance), dnd-kit
      // swallows the click that follows, and the drag preview covers the card, so the release is heard on
      // the window. A press let go where it began is a click.
      onPointerDownCapture={(e) => {
        if (e.button !== 0 || (e.target as Element).closest(CARD_CONTROLS)) return;
        const from = { x: e.clientX, y: e.clientY };
        window.addEventListener(
          'pointerup',
          (up) => {
            if (Math.hypot(up.clientX - from.x, up.clientY - from.y) < CLICK_SLOP_PX) openTaskDetails(c, id);
          },
          { once: true, capture: true },
        );
      }}
      onKeyDown={(e) => {
        if (e.key === 'Enter' && e.target === e.currentTarget && !isDragging) {
          e.preventDefault();
          openTaskDetails(c, id);
          return;
        }
        // Between cards, as in a list; a card picked up moves with the arrows instead (dnd-kit's keys).
        const by = CARD_STEP_KEYS[e.key];
        if (by && e.target === e.currentTarget && !isDragging && !e.ctrlKey && !e.altKey && !e.metaKey && !e.shiftKey) {
          e.preventDefault();
          stepCard(e.currentTarget, by);
          return;
        }
        // Into the card's actions, its one Tab stop's way to its buttons (cardFocus.ts).
        if (e.key === 'ArrowRight' && e.target === e.currentTarget && !isDragging && !e.ctrlKey && !e.altKey && !e.metaKey && !e.shiftKey) {
          if (enterActions(e.currentTarget)) e.preventDefault();
          return;
        }
        if (!isDragging && e.target !== e.currentTarget && !e.ctrlKey && !e.altKey && !e.metaKey && !e.shiftKey && moveInActions(e.currentTarget, e.target as Element, e.key)) {
          e.preventDefault();
          return;
        }
        listeners?.onKeyDown?.(e);
      }}
      role="article"
      aria-roledescription="draggable task"
      aria-keyshortcuts="ArrowUp ArrowDown j k ArrowRight Enter Space"
      aria-label={label}
      className={`${className}${isDragging ? ' dragging' : ''}`}
      data-testid={`card-${id}`}
      data-state={state}
      data-holder={holder}
    >
      {children}
    </article>
  );
}

function CardActions({ task, editing, onEdit }: { task: Task; editing: boolean; onEdit: () => void }) {
  const c = useController();
  const id = task.id;
  return (
    // A toolbar of buttons out of the Tab order: the card is the one stop, Right reaches them (cardFocus.ts).
    <div className="card-actions" role="toolbar" aria-label={`Actions on ${id}`} data-testid={`card-actions-${id}`}>
      <button type="button" tabIndex={-1} data-testid={`edit-${id}`} onClick={onEdit} aria-pressed={editing}>
        Edit
      </button>
      {(task.state === 'open' || task.state === 'claimed') && <AssignMenu taskId={id} holder={task.claim?.agentId ?? ''} tabIndex={-1} />}
      {task.state === 'open' && (
        <button
          type="button"
          tabIndex={-1}
          data-testid={`block-${id}`}
          onClick={async () => {
            const reason = await askText(`Why is ${id} blocked?`);
            if (reason !== null) await c.actions.blockTask(id, reason);
          }}
        >
          Block
        </button>
      )}
      {task.state === 'blocked' && (
        <button type="button" tabIndex={-1} data-testid={`unblock-${id}`} onClick={() => void c.actions.unblockTask(id)}>
          Unblock
        </button>
      )}
      {task.state === 'claimed' && (
        <button type="button" tabIndex={-1} data-testid={`release-${id}`} onClick={() => void c.actions.releaseTask(id)}>
          Release
        </button>
      )}
      {task.state === 'review' && (
        <>
          {task.worktree && (
            <button type="button" tabIndex={-1} data-testid={`diff-button-${id}`} onClick={() => c.worktrees.openReview(id)} title={`Review ${task.worktree.branch} against ${task.worktree.base}`}>
              Diff
            </button>
          )}
          <button
            type="button"
            tabIndex={-1}
            className="good"
            data-testid={`approve-${id}`}
            title={task.worktree ? 'Opens the diff: approve there merges it' : 'Asks first: approve moves it to Done'}
            onClick={() => void approveAsking(c, task)}
          >
            Approve…
          </button>
          <button
            type="button"
            tabIndex={-1}
            className="bad"
            data-testid={`reject-${id}`}
            onClick={async () => {
              const reason = await askText(`Why is ${id} rejected?`, '', TEXT_LIMITS.rejectReason);
              if (reason !== null) await c.actions.rejectTask(id, reason);
              // Sent back, the card leaves Review: the focus goes with it (or stays, if it was not sent).
              followCard(id);
            }}
          >
            Reject
          </button>
        </>
      )}
      {task.state === 'needs-attention' && (
        <button type="button" tabIndex={-1} data-testid={`reset-${id}`} onClick={() => void c.actions.resetTask(id)}>
          Reset
        </button>
      )}
    </div>
  );
}

/**
 * Approve from a card never merges at once: work with a branch opens its diff, where the dialog's Approve
 * merges it; work without one (no git) asks first, since approving ends the task's review for good.
 */
async function approveAsking(c: ReturnType<typeof useController>, task: Task): Promise<void> {
  if (task.worktree) return c.worktrees.openReview(task.id);
  const ok = await askConfirm(`Approve ${task.id}?`, `"${showControls(task.title, 'none')}" moves to Done. The agent's work stays where it is: this folder has no task branches to merge.`, `Approve ${task.id}`, 'good');
  if (ok) await c.actions.approveTask(task.id);
  // Approved, the card is in Done: the focus goes with it.
  followCard(task.id);
}

/** The edit form: where the window has only the start of the body, it reads the whole body first, so a
 *  save never cuts a body to the part the card showed. */
function EditForm({ task, onDone }: { task: Task; onDone: () => void }) {
  const details = useTaskDetails(task.id, undefined);
  if (task.omitted?.bodyChars && !details)
    return (
      <p className="muted" data-testid={`edit-loading-${task.id}`}>
        Reading {task.id}…
      </p>
    );
  return <EditFields task={task} body={details && task.omitted?.bodyChars ? details.body : task.body} onDone={onDone} />;
}

function EditFields({ task, body: original, onDone }: { task: Task; body: string; onDone: () => void }) {
  const c = useController();
  const [title, setTitle] = useState(task.title);
  const [body, setBody] = useState(original);
  const titleLimit = limitState(title, TEXT_LIMITS.title);
  const bodyLimit = limitState(body, TEXT_LIMITS.body);
  const over = firstOver(titleLimit, bodyLimit);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (over) return;
    const patch: { title?: string; body?: string } = {};
    if (title !== task.title) patch.title = title;
    if (body !== original) patch.body = body;
    if (Object.keys(patch).length === 0 || (await c.actions.editTask(task.id, patch))) onDone();
  };
  return (
    <form className="card-edit" onSubmit={submit} onKeyDown={(e) => e.key === 'Escape' && onDone()}>
      <input data-testid={`edit-title-${task.id}`} value={title} onChange={(e) => setTitle(e.target.value)} aria-label="Title" aria-invalid={titleLimit.over !== null} autoFocus />
      <CharCount state={titleLimit} testId={`edit-title-count-${task.id}`} />
      <textarea data-testid={`edit-body-${task.id}`} value={body} onChange={(e) => setBody(e.target.value)} aria-label="Body" aria-invalid={bodyLimit.over !== null} rows={3} />
      <CharCount state={bodyLimit} testId={`edit-body-count-${task.id}`} />
      <LimitReason reason={over} testId={`edit-limit-${task.id}`} />
      <div className="card-edit-buttons">
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid={`edit-save-${task.id}`} disabled={over !== null} title={over ?? undefined}>
          Save
        </button>
      </div>
    </form>
  );
}

/** What follows the pointer while a card is dragged (the card itself stays in its column). */
export function CardPreview({ id }: { id: string }) {
  const title = useApp((s) => s.board?.tasks.get(id)?.title ?? '');
  return (
    <div className="card card-preview">
      <header className="card-head">
        <span className="card-id">{id}</span>
        <bdi className="card-title">{showControls(title, 'none')}</bdi>
      </header>
    </div>
  );
}
