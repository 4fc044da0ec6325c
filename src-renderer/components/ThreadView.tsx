import { useMemo, useState } from 'react';
import {
  DndContext,
  DragOverlay,
  KeyboardSensor,
  useDndMonitor,
  useSensor,
  useSensors,
  type DragEndEvent,
  type DragStartEvent,
} from '@dnd-kit/core';
import { useStore } from 'zustand';
import { useApp, useController } from '../state/hooks.js';
import { densityFor, LayoutBounds, pageStorage, threadLayoutStore } from '../state/threadLayout.js';
import { AGENT_DROP_PREFIX, AgentTabs } from './AgentTabs.js';
import { Board, OPEN_COLUMN_DROP_ID } from './Board.js';
import { CardPointerSensor, collide, dragAnnouncements, DRAG_INSTRUCTIONS, jumpToDroppable } from './dnd.js';
import { useLayoutCommands } from './layoutCommands.js';
import { CardPreview, type DragData } from './TaskCard.js';
import { TerminalArea } from './TerminalArea.js';
import { ReviewDialog } from './ReviewDialog.js';
import { TaskDetails } from './TaskDetails.js';
import { ThreadHead } from './ThreadHead.js';
import { ThreadSplit } from './ThreadSplit.js';
import { WorktreesPanel } from './Worktrees.js';
import { MergeQueuePanel } from './MergeQueue.js';
import { ThreadCost } from './ThreadCost.js';
import { assignAsking } from './takeTask.js';

/** Space picks a focused card up and drops it; Enter is left to open the card's details (TaskCard), and
 *  drops a card already picked up. */
const KEYBOARD_DRAG_CODES = { start: ['Space'], cancel: ['Escape'], end: ['Space', 'Enter'] };

/** App renders a ThreadView per Thread key (`key={activeKey}`): the layout store is that Thread's. */
export function ThreadView() {
  const c = useController();
  const threadKey = useApp((s) => s.activeKey) ?? '';
  const loaded = useApp((s) => s.board !== null);
  const [layout] = useState(() => threadLayoutStore(pageStorage(), threadKey));
  // A boolean, so adding tasks re-renders this only when the board crosses the line.
  const manyTasks = useApp((s) => Object.values(s.columns).reduce((n, ids) => n + ids.length, 0) >= LayoutBounds.compactFromTasks);
  const density = useStore(layout, (l) => densityFor(l, manyTasks));
  useLayoutCommands(layout, manyTasks);
  const sensors = useSensors(useSensor(CardPointerSensor), useSensor(KeyboardSensor, { coordinateGetter: jumpToDroppable, keyboardCodes: KEYBOARD_DRAG_CODES }));

  // No drag state here: a drag re-renders only what shows it (the preview, the cards' drag sources, the
  // drop targets), never the whole Thread view.
  const onDragEnd = (e: DragEndEvent) => {
    const taskId = (e.active.data.current as DragData | undefined)?.taskId;
    const over = e.over ? String(e.over.id) : null;
    if (!taskId || !over) return;
    const task = c.state.board?.tasks.get(taskId);
    if (over.startsWith(AGENT_DROP_PREFIX)) {
      const agentId = over.slice(AGENT_DROP_PREFIX.length);
      void assignAsking(c, taskId, agentId);
    } else if (over === OPEN_COLUMN_DROP_ID) {
      if (task && (task.claim || task.state === 'review')) void c.actions.releaseTask(taskId);
    }
  };

  const announcements = useMemo(() => dragAnnouncements(c), [c]);
  return (
    <DndContext
      sensors={sensors}
      collisionDetection={collide}
      onDragEnd={onDragEnd}
      accessibility={{ announcements, screenReaderInstructions: { draggable: DRAG_INSTRUCTIONS } }}
    >
      <div className="thread-view">
        <ThreadHead layout={layout} manyTasks={manyTasks} />
        {loaded ? <WorktreesPanel /> : null}
        {loaded ? <MergeQueuePanel /> : null}
        {loaded ? <ThreadCost /> : null}
        <ThreadSplit
          layout={layout}
          board={loaded ? <Board density={density} /> : <div className="loading">Loading the board…</div>}
          agents={
            <>
              <AgentTabs />
              <TerminalArea />
            </>
          }
        />
        <ReviewDialog />
        <TaskDetails />
      </div>
      <DragPreview />
    </DndContext>
  );
}

/** What follows the pointer while a card is dragged; its own state, so a drag start re-renders only this. */
function DragPreview() {
  const [dragging, setDragging] = useState<string | null>(null);
  useDndMonitor(
    useMemo(
      () => ({
        onDragStart: (e: DragStartEvent) => setDragging((e.active.data.current as DragData | undefined)?.taskId ?? null),
        onDragEnd: () => setDragging(null),
        onDragCancel: () => setDragging(null),
      }),
      [],
    ),
  );
  return <DragOverlay dropAnimation={null}>{dragging ? <CardPreview id={dragging} /> : null}</DragOverlay>;
}
