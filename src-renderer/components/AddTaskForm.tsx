import { useRef, useState, type FormEvent } from 'react';
import { useController } from '../state/hooks.js';
import { firstOver, limitState, TEXT_LIMITS } from '../state/textLimit.js';
import { CharCount, LimitReason } from './CharCount.js';

export function AddTaskForm() {
  const c = useController();
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const titleInput = useRef<HTMLInputElement>(null);
  const titleLimit = limitState(title, TEXT_LIMITS.title);
  const bodyLimit = limitState(body, TEXT_LIMITS.body);
  // Over a limit, the task is not sent: the reason is on screen now, not in a refusal after the click.
  const over = firstOver(titleLimit, bodyLimit);
  // The fields clear as soon as a task is sent, so the next title can be typed at once; if the host refuses
  // it, the text comes back (unless something new was typed meanwhile) and the banner says why.
  const submit = async (e: FormEvent | { preventDefault(): void }) => {
    e.preventDefault();
    const t = title;
    const b = body;
    if (!t.trim() || over) return;
    setTitle('');
    setBody('');
    // The next title, at once: the button just went disabled, which would drop the focus to the page.
    titleInput.current?.focus();
    if (!(await c.actions.addTask(t, b || undefined))) {
      setTitle((cur) => (cur === '' ? t : cur));
      setBody((cur) => (cur === '' ? b : cur));
    }
  };
  return (
    <form className="add-task add-task-counted" onSubmit={submit}>
      <div className="counted-field counted-field-title">
        <input
          ref={titleInput}
          data-testid="add-task-title"
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          placeholder="New task"
          aria-label="New task title"
          aria-invalid={titleLimit.over !== null}
          aria-describedby="add-task-limit"
        />
        <CharCount state={titleLimit} testId="add-task-title-count" />
      </div>
      <div className="counted-field counted-field-body">
        <textarea
          data-testid="add-task-body"
          value={body}
          onChange={(e) => setBody(e.target.value)}
          placeholder="Details"
          aria-label="New task details (Ctrl+Enter adds the task)"
          aria-invalid={bodyLimit.over !== null}
          aria-describedby="add-task-limit"
          rows={1}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
          }}
        />
        <CharCount state={bodyLimit} testId="add-task-body-count" />
      </div>
      <button type="submit" className="primary" data-testid="add-task-submit" disabled={!title.trim() || over !== null} title={over ?? undefined}>
        Add task
      </button>
      <div id="add-task-limit" className="limit-slot">
        <LimitReason reason={over} testId="add-task-limit" />
      </div>
    </form>
  );
}
