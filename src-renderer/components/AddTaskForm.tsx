import { useRef, useState, type FormEvent } from 'react';
import { useController } from '../state/hooks.js';

export function AddTaskForm() {
  const c = useController();
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const titleInput = useRef<HTMLInputElement>(null);
  // The fields clear as soon as a task is sent, so the next title can be typed at once; if the host refuses
  // it, the text comes back (unless something new was typed meanwhile) and the banner says why.
  const submit = async (e: FormEvent | { preventDefault(): void }) => {
    e.preventDefault();
    const t = title;
    const b = body;
    if (!t.trim()) return;
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
    <form className="add-task" onSubmit={submit}>
      <input ref={titleInput} data-testid="add-task-title" value={title} onChange={(e) => setTitle(e.target.value)} placeholder="New task title" aria-label="New task title" />
      <textarea
        data-testid="add-task-body"
        value={body}
        onChange={(e) => setBody(e.target.value)}
        placeholder="Details (optional)"
        aria-label="New task details (Ctrl+Enter adds the task)"
        rows={1}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
        }}
      />
      <button type="submit" className="primary" data-testid="add-task-submit" disabled={!title.trim()}>
        Add task
      </button>
    </form>
  );
}
