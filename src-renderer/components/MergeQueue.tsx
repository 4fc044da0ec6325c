import { useMemo, type KeyboardEvent } from 'react';
import { closestCenter, DndContext, KeyboardSensor, useSensor, useSensors, type DragEndEvent } from '@dnd-kit/core';
import { arrayMove, SortableContext, sortableKeyboardCoordinates, useSortable, verticalListSortingStrategy } from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';
import { queueView, type QueueItem } from '../../src-shared/board/mergeQueue.js';
import { useApp, useController } from '../state/hooks.js';
import { ReleasingPointerSensor } from './releasingPointerSensor.js';
import { CostFigure } from './CostFigure.js';

/**
 * The panel's layout, inline. It was written inline when app.css ended inside an unclosed block that swallowed
 * every later rule; the stylesheets are one file per part now (styles/app.css), each parsed alone, so an
 * unclosed block fails the build at its own file. It frames the panel like the Worktrees panel (.worktrees)
 * and sets each entry out in a row.
 */
const PANEL = { flex: 'none', margin: '0 14px 8px', maxHeight: '30vh', overflow: 'auto', background: 'var(--bg-2)', border: '1px solid var(--line)', borderRadius: 'var(--radius)' } as const;
const HEAD = { display: 'flex', alignItems: 'baseline', gap: 10, paddingRight: 10 } as const;
const LIST = { margin: 0, padding: '0 10px 8px 30px' } as const;
const ENTRY = { display: 'flex', alignItems: 'center', gap: 8, padding: '3px 4px', cursor: 'grab', touchAction: 'none' } as const;

/** A press that moves this far is a drag; less is a click on the entry's buttons. */
const DRAG_START_PX = 4;

/**
 * The merge queue (issue 34): approved tasks in the order they land, the one landing now, what each waits on,
 * and whether a verify command checks each merge. Reordered by dragging an entry (dnd-kit's sortable list; the
 * keyboard drags too: Space, arrows, Space) or with each entry's Up and Down buttons; an entry can be taken out
 * (it stays in review). Shown only while the queue holds something.
 */
export function MergeQueuePanel() {
  const c = useController();
  const version = useApp((s) => s.boardVersion);
  const board = useApp((s) => s.board);
  const view = useMemo(() => (board ? queueView(board.tasks, board.settings.verify) : null), [board, version]);
  // Releasing: an Up click right after a drag must move the entry (dnd-kit's own sensor swallowed it).
  const sensors = useSensors(useSensor(ReleasingPointerSensor, { activationConstraint: { distance: DRAG_START_PX } }), useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }));
  if (!view || view.items.length === 0) return null;
  const ids = view.items.map((i) => i.taskId);
  /** Move `id` to `to` in the list as shown: the board takes it as "before the entry that then follows it". */
  const moveTo = (id: string, to: number) => {
    const from = ids.indexOf(id);
    if (from < 0 || to < 0 || to >= ids.length || to === from) return;
    const next = arrayMove(ids, from, to);
    void c.actions.moveQueued(id, next[to + 1] ?? null);
  };
  const onDragEnd = (e: DragEndEvent) => {
    if (e.over && e.active.id !== e.over.id) moveTo(String(e.active.id), ids.indexOf(String(e.over.id)));
  };
  return (
    <section className="merge-queue" style={PANEL} data-testid="merge-queue" aria-label="Merge queue">
      <header className="merge-queue-head" style={HEAD}>
        <h2>
          Merge queue <span className="count">{ids.length}</span>
        </h2>
        <span className="muted" data-testid="merge-queue-check">
          {view.verify ? (
            <>
              each merge is checked with <code>{view.verify}</code> before the base moves
            </>
          ) : (
            'no verify command is set: merges land unchecked'
          )}
        </span>
      </header>
      <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
        <SortableContext items={ids} strategy={verticalListSortingStrategy}>
          <ol className="merge-queue-list" style={LIST}>
            {view.items.map((item, i) => (
              <QueueEntry key={item.taskId} item={item} first={i === 0} last={i === ids.length - 1} move={(to) => moveTo(item.taskId, to)} />
            ))}
          </ol>
        </SortableContext>
      </DndContext>
    </section>
  );
}

const keepKeys = (e: KeyboardEvent<HTMLButtonElement>) => e.stopPropagation();

function QueueEntry({ item, first, last, move }: { item: QueueItem; first: boolean; last: boolean; move: (to: number) => void }) {
  const c = useController();
  const { attributes, listeners, setNodeRef, transform, transition, isDragging } = useSortable({ id: item.taskId });
  const at = item.position - 1;
  const id = item.taskId;
  return (
    <li
      ref={setNodeRef}
      style={{ ...ENTRY, transform: CSS.Transform.toString(transform), transition, opacity: isDragging ? 0.6 : 1, fontWeight: item.landing ? 600 : undefined }}
      className={`merge-queue-item${item.landing ? ' landing' : ''}${isDragging ? ' dragging' : ''}`}
      data-testid={`queue-item-${id}`}
      data-position={item.position}
      aria-label={`${id}, position ${item.position}${item.landing ? ', landing now' : ''}`}
      {...attributes}
      {...listeners}
    >
      <span className="card-id">{id}</span> <span style={{ flex: 1 }}>{item.title}</span>
      {/* What landing it cost (issue 47): its agents' spend under its claims. */}
      <CostFigure taskId={id} testId={`queue-cost-${id}`} />
      {item.landing ? <span className="badge">landing now</span> : null}
      {item.waitsOn.length ? <span className="muted">waits on {item.waitsOn.join(', ')}</span> : null}
      {/* Enter and Space on a button press it: they must not reach the entry, where they would start a drag. */}
      <button type="button" onKeyDown={keepKeys} data-testid={`queue-up-${id}`} aria-label={`Move ${id} up`} disabled={first} onClick={() => move(at - 1)}>
        ↑
      </button>
      <button type="button" onKeyDown={keepKeys} data-testid={`queue-down-${id}`} aria-label={`Move ${id} down`} disabled={last} onClick={() => move(at + 1)}>
        ↓
      </button>
      <button type="button" onKeyDown={keepKeys} data-testid={`queue-remove-${id}`} aria-label={`Take ${id} out of the merge queue`} onClick={() => void c.actions.removeQueued(id)}>
        Take out
      </button>
    </li>
  );
}
