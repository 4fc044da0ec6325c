import { PALETTE_KEYS } from './CommandPalette.js';

/**
 * What a new Thread shows where its terminals will be, until it has a task or an agent: how the work flows,
 * in three steps, and where the shortcuts are.
 */
export function FirstSteps() {
  return (
    <section className="first-steps" data-testid="first-steps" aria-labelledby="first-steps-title">
      <h2 id="first-steps-title">Three steps to get going</h2>
      <ol>
        <li>
          <strong>Add tasks</strong> in the field above the board: one title per piece of work, details if it needs them.
        </li>
        <li>
          <strong>Launch an agent</strong> with <em>+ Launch agent</em>: a coding CLI (Claude Code, Codex, Gemini…) or a shell, each in
          its own terminal here.
        </li>
        <li>
          <strong>Agents claim tasks</strong> from the board, work on them and hand them in for your review. To give a task to one agent,
          drag its card onto the agent’s tab (or use <em>Assign to…</em> on the card).
        </li>
      </ol>
      <p className="first-steps-keys">
        <kbd>?</kbd> lists every shortcut · <kbd>{PALETTE_KEYS}</kbd> opens the command palette · <kbd>Ctrl+F</kbd> finds text in a terminal
      </p>
    </section>
  );
}
