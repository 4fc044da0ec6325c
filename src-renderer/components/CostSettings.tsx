import { useId, useState } from 'react';
import { BUNDLED_PRICES, PRICE_TABLE_DATE } from '../../src-shared/usage/prices.js';
import { useApp, useController } from '../state/hooks.js';
import { formatPrices, parsePrices, samePrices } from '../state/costSettingsFields.js';
import { BudgetForm } from './BudgetForm.js';
import '../styles/cost.css';

/**
 * Thread settings' cost part (issue 47): the Thread's budget, and its own prices over the bundled, dated table
 * (a line per model; the bundled ones listed below for reference). Each is saved with its own button: a budget is
 * its own event, and prices price only the turns folded after the change, which a person should do on purpose.
 */
export function CostSettings() {
  const c = useController();
  const budget = useApp((s) => (s.boardVersion, s.board?.settings.budget ?? null));
  const prices = useApp((s) => (s.boardVersion, s.board?.settings.prices));
  const id = useId();
  const [text, setText] = useState(() => formatPrices(prices));
  const [error, setError] = useState<string | null>(null);
  const save = async () => {
    const parsed = parsePrices(text);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(null);
    if (!samePrices(parsed.value, prices)) await c.actions.setSettings({ prices: parsed.value });
  };
  return (
    <section className="cost-budgets" data-testid="cost-settings" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>Cost</h3>
      <BudgetForm what="the Thread" budget={budget} set={(b) => c.actions.setBudget(null, b)} testId="thread-budget" />
      <p className="muted">At 80% of a budget you are told; at 100% its tasks are not dispatched again, their agents are told in their panes, and you choose: raise it, or stop the agent.</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label htmlFor={`${id}-prices`}>Prices of your own (a line per model: input, output, cache read, cache write; dollars per million tokens)</label>
        <textarea
          id={`${id}-prices`}
          data-testid="settings-prices"
          rows={3}
          cols={60}
          placeholder="e.g. my-model 3 15 0.3 3.75"
          value={text}
          aria-invalid={error !== null}
          aria-describedby={error ? `${id}-prices-error` : undefined}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" data-testid="settings-prices-save">
          Save prices
        </button>
        {error && (
          <span className="field-error" id={`${id}-prices-error`} role="alert" data-testid="settings-prices-error">
            {error}
          </span>
        )}
      </form>
      <details>
        <summary>The bundled prices ({PRICE_TABLE_DATE})</summary>
        <table className="cost-table" data-testid="bundled-prices">
          <thead>
            <tr>
              <th scope="col">model (and names it begins)</th>
              <th scope="col">input</th>
              <th scope="col">output</th>
              <th scope="col">cache read</th>
              <th scope="col">cache write</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(BUNDLED_PRICES).map(([m, p]) => (
              <tr key={m}>
                <th scope="row">{m}</th>
                <td>{p.input}</td>
                <td>{p.output}</td>
                <td>{p.cacheRead}</td>
                <td>{p.cacheWrite}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}
