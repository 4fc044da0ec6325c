import { useRef, useState, type FormEvent } from 'react';

/**
 * A details panel field that holds a short list as text (what a task waits on, who may take it), saved with
 * Enter or its button, put back with Escape. While the person is not typing it follows the board (another
 * window's edit). A refusal is in the banner with the board's reason, and the draft stays to be fixed.
 */
export function DetailsListField(p: {
  stored: string;
  label: string;
  placeholder: string;
  /** The form's test id; the input's and the button's are it with -input and -save. */
  testId: string;
  /** Saves the text; true once the board took it. */
  save: (text: string) => Promise<boolean>;
}) {
  // What the person is typing; null while they are not.
  const [draft, setDraft] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // The text as the field holds it now, not as the last render saw it: an Enter right after the keystrokes
    // can come before React has drawn them (under load in CI the save saw no draft and saved nothing).
    const text = input.current?.value ?? draft ?? p.stored;
    if (saving || (draft === null && text === p.stored)) return;
    setSaving(true);
    const ok = await p.save(text);
    setSaving(false);
    if (ok) setDraft(null);
  };
  const idle = draft === null || saving;
  return (
    <form className="details-after" onSubmit={(e) => void submit(e)} data-testid={p.testId}>
      <input
        ref={input}
        aria-label={p.label}
        placeholder={p.placeholder}
        value={draft ?? p.stored}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && draft !== null) {
            e.stopPropagation();
            setDraft(null);
          }
        }}
        data-testid={`${p.testId}-input`}
      />
      {/* aria-disabled, not disabled: a form whose default button is disabled ignores Enter, and Enter must
          save what was typed even before the render that enables the button. */}
      <button type="submit" aria-disabled={idle} data-testid={`${p.testId}-save`}>
        Save
      </button>
    </form>
  );
}
