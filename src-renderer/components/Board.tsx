import { memo, useState } from 'react';
import { useDroppable } from '@dnd-kit/core';
import { TASK_STATES, type TaskState } from '../../src-shared/board/model.js';
import { useApp } from '../state/hooks.js';
import { TaskCard } from './TaskCard.js';

const LABELS: Record<TaskState, string> = {
  open: 'Open',
  claimed: 'Claimed',
  review: 'Review',
  done: 'Done',
  blocked: 'Blocked',
  'needs-attention': 'Needs attention',
};

/** Cards drawn per column before "show more": a column of thousands of done tasks stays cheap to draw. */
const PAGE = 200;

export const OPEN_COLUMN_DROP_ID = 'column:open';

export function Board() {
  return (
    <div className="board" role="list" aria-label="Backlog">
      {TASK_STATES.map((s) => (
        <Column key={s} state={s} />
      ))}
    </div>
  );
}

const Column = memo(function Column({ state }: { state: TaskState }) {
  const ids = useApp((s) => s.columns[state]);
  const [shown, setShown] = useState(PAGE);
  const { setNodeRef, isOver } = useDroppable({ id: state === 'open' ? OPEN_COLUMN_DROP_ID : `column:${state}`, disabled: state !== 'open' });
  return (
    <section ref={setNodeRef} className={`column column-${state}${isOver ? ' drop-over' : ''}`} data-testid={`column-${state}`} role="listitem" aria-label={LABELS[state]}>
      <h3 className="column-title">
        {LABELS[state]} <span className="count">{ids.length}</span>
      </h3>
      <div className="column-cards">
        {ids.slice(0, shown).map((id) => (
          <TaskCard key={id} id={id} />
        ))}
        {ids.length > shown && (
          <button type="button" className="more" onClick={() => setShown((n) => n + PAGE)}>
            Show {Math.min(PAGE, ids.length - shown)} more of {ids.length - shown}
          </button>
        )}
      </div>
    </section>
  );
});
