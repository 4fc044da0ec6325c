import type { PointerEvent as ReactPointerEvent } from 'react';
import type { Announcements, UniqueIdentifier } from '@dnd-kit/core';
import type { AppController } from '../state/controller.js';
import { showControls } from '../../src-shared/text/controlChars.js';
import { closestCenter, pointerWithin, type CollisionDetection, type KeyboardCoordinateGetter, type PointerSensorOptions } from '@dnd-kit/core';
import { ReleasingPointerSensor } from './releasingPointerSensor.js';

/** Pointer drags hit what is under the pointer; keyboard drags (no pointer) take the nearest target. */
export const collide: CollisionDetection = (args) => (args.pointerCoordinates ? pointerWithin(args) : closestCenter(args));

const FORWARD = new Set(['ArrowRight', 'ArrowDown']);
const BACKWARD = new Set(['ArrowLeft', 'ArrowUp']);

/**
 * Keyboard dragging that jumps from drop target to drop target (the open column, each agent tab) instead of
 * nudging the card a few pixels per key press: arrows pick the next/previous target, Space drops.
 */
export const jumpToDroppable: KeyboardCoordinateGetter = (event, { context, currentCoordinates }) => {
  const forward = FORWARD.has(event.code);
  if (!forward && !BACKWARD.has(event.code)) return undefined;
  event.preventDefault();
  const { collisionRect, droppableRects, droppableContainers, over } = context;
  if (!collisionRect) return undefined;
  const targets = droppableContainers
    .getEnabled()
    .map((c) => ({ id: c.id, rect: droppableRects.get(c.id) }))
    .filter((t): t is { id: typeof t.id; rect: NonNullable<typeof t.rect> } => !!t.rect)
    .sort((a, b) => a.rect.top - b.rect.top || a.rect.left - b.rect.left);
  if (targets.length === 0) return undefined;
  const i = targets.findIndex((t) => t.id === over?.id);
  const n = targets.length;
  const next = targets[i < 0 ? (forward ? 0 : n - 1) : (i + (forward ? 1 : -1) + n) % n];
  if (!next) return undefined;
  const cx = next.rect.left + next.rect.width / 2;
  const cy = next.rect.top + next.rect.height / 2;
  return {
    x: currentCoordinates.x + cx - (collisionRect.left + collisionRect.width / 2),
    y: currentCoordinates.y + cy - (collisionRect.top + collisionRect.height / 2),
  };
};

/** Controls inside a card keep their own clicks and typing; a drag starts anywhere else on the card. */
const INTERACTIVE = 'button, input, textarea, select, a, [contenteditable="true"], [data-no-drag]';

export function startsOnControl(target: EventTarget | null): boolean {
  return target instanceof Element && target.closest(INTERACTIVE) !== null;
}

/**
 * The pointer sensor for cards. No activation distance (a drag starts on the first move, so a single
 * pointer move onto a tab is enough, as a quick flick or an automated drag produces), but never from a
 * button or a field inside the card, whose clicks must keep working. A click on a card is a drag that ends
 * where it began: the sensor lets the page go at the release (ReleasingPointerSensor), or the click or
 * keystroke that follows it would be lost.
 */
export class CardPointerSensor extends ReleasingPointerSensor {
  static override activators = [
    {
      eventName: 'onPointerDown' as const,
      handler: ({ nativeEvent: event }: ReactPointerEvent, { onActivation }: PointerSensorOptions): boolean => {
        if (!event.isPrimary || event.button !== 0 || startsOnControl(event.target)) return false;
        onActivation?.({ event });
        return true;
      },
    },
  ];
}

/** What a screen reader hears on focusing a card. */
export const DRAG_INSTRUCTIONS =
  'Enter opens the task. Right arrow reaches its buttons (Left or Escape comes back); Up and Down go to the next card. Space picks it up; arrow keys move it between the Open column and the agents’ tabs; Space drops it there, Escape puts it back.';

/**
 * What the live region says during a drag, in the names the window shows ("T-3 Add tests", "shell 2's tab"),
 * never dnd-kit's internal ids (`agent:shell-1-58ec136ed677`).
 */
export function dragAnnouncements(c: AppController): Announcements {
  const task = (id: UniqueIdentifier) => {
    const taskId = String(id).replace(/^task:/, '');
    const title = c.state.board?.tasks.get(taskId)?.title;
    // Read out as shown on the card: controls an older journal may hold as escapes, never obeyed.
    return title ? `${taskId} “${showControls(title, 'none')}”` : taskId;
  };
  const target = (id: UniqueIdentifier | undefined) => {
    const s = String(id ?? '');
    if (s.startsWith('agent:')) return `${c.agentName(s.slice('agent:'.length))}’s tab (assign)`;
    if (s === 'column:open') return 'the Open column (release)';
    return null;
  };
  return {
    onDragStart: ({ active }) => `Picked up ${task(active.id)}.`,
    onDragOver: ({ active, over }) => {
      const t = target(over?.id);
      return t ? `${task(active.id)} is over ${t}.` : `${task(active.id)} is over no drop target.`;
    },
    onDragEnd: ({ active, over }) => {
      const t = target(over?.id);
      return t ? `${task(active.id)} dropped on ${t}.` : `${task(active.id)} put back.`;
    },
    onDragCancel: ({ active }) => `Dragging ${task(active.id)} cancelled; it is where it was.`,
  };
}
