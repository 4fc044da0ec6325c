import { useState } from 'react';
import {
  DndContext,
  DragOverlay,
  KeyboardSensor,
  useSensor,
  useSensors,
  type DragEndEvent,
  type DragStartEvent,
} from '@dnd-kit/core';
import { useApp, useController } from '../state/hooks.js';
import { AddTaskForm } from './AddTaskForm.js';
import { AGENT_DROP_PREFIX, AgentTabs } from './AgentTabs.js';
import { Board, OPEN_COLUMN_DROP_ID } from './Board.js';
import { CardPointerSensor, collide, jumpToDroppable } from './dnd.js';
import { GoalEditor } from './GoalEditor.js';
import { CardPreview, type DragData } from './TaskCard.js';
import { TerminalArea } from './TerminalArea.js';
import { ReviewDialog } from './ReviewDialog.js';
import { ThreadSettings } from './ThreadSettings.js';
import { GitStatus, WorktreesPanel } from './Worktrees.js';

export function ThreadView() {
  const c = useController();
  const folder = useApp((s) => s.folder);
  const loaded = useApp((s) => s.board !== null);
  const [dragging, setDragging] = useState<string | null>(null);
  const sensors = useSensors(useSensor(CardPointerSensor), useSensor(KeyboardSensor, { coordinateGetter: jumpToDroppable }));

  const onDragStart = (e: DragStartEvent) => setDragging((e.active.data.current as DragData | undefined)?.taskId ?? null);
  const onDragEnd = (e: DragEndEvent) => {
    setDragging(null);
    const taskId = (e.active.data.current as DragData | undefined)?.taskId;
    const over = e.over ? String(e.over.id) : null;
    if (!taskId || !over) return;
    const task = c.state.board?.tasks.get(taskId);
    if (over.startsWith(AGENT_DROP_PREFIX)) {
      const agentId = over.slice(AGENT_DROP_PREFIX.length);
      if (task?.claim?.agentId !== agentId) void c.assignTask(taskId, agentId);
    } else if (over === OPEN_COLUMN_DROP_ID) {
      if (task && (task.claim || task.state === 'review')) void c.releaseTask(taskId);
    }
  };

  return (
    <DndContext sensors={sensors} collisionDetection={collide} onDragStart={onDragStart} onDragEnd={onDragEnd} onDragCancel={() => setDragging(null)}>
      <div className="thread-view">
        <section className="thread-head">
          <GoalEditor />
          <div className="thread-folder" title="Folder">
            {folder}
          </div>
          {loaded ? <ThreadSettings /> : null}
          {loaded ? <GitStatus /> : null}
        </section>
        {loaded ? (
          <>
            <WorktreesPanel />
            <AddTaskForm />
            <Board />
          </>
        ) : (
          <div className="loading">Loading the board…</div>
        )}
        <section className="agents" aria-label="Agents">
          <AgentTabs />
          <TerminalArea />
        </section>
        <ReviewDialog />
      </div>
      <DragOverlay dropAnimation={null}>{dragging ? <CardPreview id={dragging} /> : null}</DragOverlay>
    </DndContext>
  );
}
