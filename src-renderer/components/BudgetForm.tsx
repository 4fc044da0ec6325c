import { useEffect, useId, useState } from 'react';
import { parseBudget, formatBudget, type BudgetValue } from '../state/costSettingsFields.js';
import '../styles/cost.css';

/**
 * A budget's field (issue 47, item 3): an amount and its unit (dollars, or tokens for flat-rate plans), set with
 * its own button, since a budget is its own event on the board, not part of the settings' Save. A mistake is named
 * beside the field and nothing is sent; the board's refusal (a bound) shows in the error banner and the field keeps
 * what was typed. Used for the Thread (settings), a task (its details) and a budget reached (Raise).
 */
export function BudgetForm(p: {
  /** What the form is for, in the words its label uses: "the Thread", "T-3". */
  what: string;
  budget: BudgetValue | null | undefined;
  set: (budget: BudgetValue | null) => Promise<boolean>;
  testId: string;
  /** The button's word: "Set", or "Raise" where a budget was reached. */
  verb?: string;
  /** The amount to start from (Raise offers more than the budget reached). */
  initial?: string;
}) {
  const id = useId();
  const [unit, setUnit] = useState<BudgetValue['unit']>(p.budget?.unit ?? 'usd');
  const [text, setText] = useState(p.initial ?? formatBudget(p.budget));
  const [error, setError] = useState<string | null>(null);
  // The board's budget changed (this form's Set, or another window's): the field shows it, and keeps the focus
  // where it was (a form drawn anew would drop it to the page). A Raise form keeps the amount it offers.
  const limit = p.budget?.limit;
  const budgetUnit = p.budget?.unit;
  useEffect(() => {
    if (p.initial !== undefined) return;
    setText(limit === undefined ? '' : String(limit));
    if (budgetUnit) setUnit(budgetUnit);
  }, [limit, budgetUnit, p.initial]);
  const submit = async () => {
    const parsed = parseBudget(text, unit);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(null);
    await p.set(parsed.value);
  };
  return (
    <form
      className="budget-form"
      data-testid={p.testId}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label htmlFor={`${id}-amount`}>Budget for {p.what}</label>{' '}
      <input
        id={`${id}-amount`}
        data-testid={`${p.testId}-amount`}
        inputMode="decimal"
        size={10}
        value={text}
        placeholder="none"
        aria-invalid={error !== null}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => setText(e.target.value)}
      />{' '}
      <select aria-label={`Unit of the budget for ${p.what}`} data-testid={`${p.testId}-unit`} value={unit} onChange={(e) => setUnit(e.target.value as BudgetValue['unit'])}>
        <option value="usd">dollars</option>
        <option value="tokens">tokens</option>
      </select>{' '}
      <button type="submit" data-testid={`${p.testId}-set`}>
        {p.verb ?? 'Set'}
      </button>
      {p.budget && !p.verb && (
        <>
          {' '}
          <button type="button" data-testid={`${p.testId}-remove`} onClick={() => void p.set(null)}>
            Remove
          </button>
        </>
      )}
      {error && (
        <span className="field-error" id={`${id}-error`} role="alert" data-testid={`${p.testId}-error`}>
          {error}
        </span>
      )}
    </form>
  );
}
