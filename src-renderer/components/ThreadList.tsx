import { showControls } from '../../src-shared/text/controlChars.js';
import { useState, type FormEvent } from 'react';
import { useApp, useController } from '../state/hooks.js';

function basename(folder: string): string {
  const parts = folder.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? folder;
}

export function ThreadList() {
  const c = useController();
  const threads = useApp((s) => s.threads);
  const loaded = useApp((s) => s.threadsLoaded);
  const activeKey = useApp((s) => s.activeKey);
  const [folder, setFolder] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await c.openFolder(folder)) setFolder('');
  };
  return (
    <nav className="threads" aria-label="Threads">
      <h2>Threads</h2>
      <ul>
        {threads.map((t) => (
          <li key={t.key}>
            <button
              type="button"
              data-testid={`thread-item-${t.key}`}
              className={`thread${t.key === activeKey ? ' active' : ''}${t.open ? '' : ' closed'}`}
              onClick={() => void c.selectThread(t)}
              title={t.folder}
            >
              <span className="thread-name">{basename(t.folder)}</span>
              {/* The goal is journal text: controls an older journal may hold shown as escapes, isolated. */}
              <bdi className="thread-goal">{t.goal ? showControls(t.goal, 'tab-newline') : t.open ? 'open' : 'closed'}</bdi>
            </button>
          </li>
        ))}
        {loaded && threads.length === 0 && <li className="muted">No threads yet: open a folder.</li>}
      </ul>
      <form className="open-folder" onSubmit={submit}>
        <input
          data-testid="open-folder-input"
          value={folder}
          onChange={(e) => setFolder(e.target.value)}
          placeholder="/path/to/project"
          aria-label="Folder to open"
          spellCheck={false}
        />
        <button type="submit" data-testid="open-folder-submit" disabled={!folder.trim()}>
          Open folder
        </button>
      </form>
    </nav>
  );
}
