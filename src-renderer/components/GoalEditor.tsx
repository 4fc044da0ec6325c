import { useEffect, useRef, useState } from 'react';
import { useApp, useController } from '../state/hooks.js';
import { limitState, TEXT_LIMITS } from '../state/textLimit.js';
import { CharCount, LimitReason } from './CharCount.js';
import { UserText } from './UserText.js';

/** The Thread's goal, edited in place: click → textarea → saved on blur or Enter (Shift+Enter: newline). */
export function GoalEditor() {
  const c = useController();
  const goal = useApp((s) => s.goal);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');
  /** Shown until the host's goal-set event arrives, so the saved text does not flicker back. */
  const [pending, setPending] = useState<string | null>(null);
  const finishing = useRef(false);
  useEffect(() => setPending(null), [goal]);
  const limit = limitState(draft, TEXT_LIMITS.goal);

  const start = () => {
    finishing.current = false;
    setDraft(pending ?? goal);
    setEditing(true);
  };
  const finish = async (save: boolean, byKey = false) => {
    if (finishing.current) return;
    // A goal over its limit is not saved and not dropped either: the editor stays, with the reason, until
    // it is shortened or Escape gives it up.
    if (save && limit.over !== null && draft !== goal) return;
    finishing.current = true;
    setEditing(false);
    // Finished from the keyboard, the person is still here: the goal keeps the focus (a blur went elsewhere).
    if (byKey) requestAnimationFrame(() => document.querySelector<HTMLElement>('[data-testid="thread-goal"]')?.focus());
    if (!save || draft === goal) return;
    setPending(draft);
    if (!(await c.actions.setGoal(draft))) setPending(null);
  };
  const shown = pending ?? goal;
  if (editing) {
    return (
      <div className="goal editing" data-testid="thread-goal">
        <textarea
          data-testid="goal-input"
          autoFocus
          value={draft}
          rows={Math.min(8, Math.max(2, draft.split('\n').length))}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={() => void finish(true)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void finish(true, true);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              void finish(false, true);
            }
          }}
          aria-label="Thread goal"
          aria-invalid={limit.over !== null}
          aria-describedby="goal-limit"
        />
        <div className="limit-line">
          <CharCount state={limit} testId="goal-count" />
        </div>
        <div id="goal-limit">
          <LimitReason reason={limit.over && `${limit.over} Escape gives up the change.`} testId="goal-limit" />
        </div>
      </div>
    );
  }
  return (
    <div
      className="goal"
      data-testid="thread-goal"
      role="button"
      tabIndex={0}
      title="Click to edit the goal"
      onClick={start}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          start();
        }
      }}
    >
      {shown ? <UserText text={shown} /> : <span className="placeholder">Set the goal for this thread…</span>}
    </div>
  );
}
