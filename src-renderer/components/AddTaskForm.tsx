import { useState, type FormEvent } from 'react';
import { useController } from '../state/hooks.js';

export function AddTaskForm() {
  const c = useController();
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!title.trim() || busy) return;
    setBusy(true);
    const ok = await c.addTask(title, body || undefined);
    setBusy(false);
    if (ok) {
      setTitle('');
      setBody('');
    }
  };
  return (
    <form className="add-task" onSubmit={submit}>
      <input data-testid="add-task-title" value={title} onChange={(e) => setTitle(e.target.value)} placeholder="New task title" aria-label="New task title" />
      <textarea
        data-testid="add-task-body"
        value={body}
        onChange={(e) => setBody(e.target.value)}
        placeholder="Details (optional)"
        aria-label="New task details"
        rows={1}
      />
      <button type="submit" className="primary" data-testid="add-task-submit" disabled={!title.trim() || busy}>
        Add task
      </button>
    </form>
  );
}
