import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core (a devDependency, the version the issue measured with) run in the page, for the e2e tests that
 * check a view has no accessibility violations. Any test may call it on the whole page or on one part of it
 * (the tab strip, the event log): `expect(describeViolations(await axeViolations(page, sel))).toBe('')`
 * fails with every rule, its impact, and the elements it found, one per line.
 */
const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** One broken rule, with the elements that break it (axe's CSS selectors for them). */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** axe's rule set as it ships: WCAG A/AA and the best-practice rules (landmark-unique, page-has-heading-one,
 *  region…), which is what the issue's audit ran, unless `rules` names some (runOnly). Violations are
 *  collected whole; of the rest only which rules passed (resultTypes keeps one node of each). */
const RESULT_TYPES = ['violations'] as const;

/** What one axe run found: the violations, and the rules that applied and passed (a rule absent from both
 *  found nothing to check, which a test that means a rule to hold can tell). */
export interface AxeResult {
  violations: AxeViolation[];
  passes: string[];
}

/**
 * One axe run in `scope`: the whole document, or the element a CSS selector names (which must be in the
 * page). axe is put into the page once per document. Not with a script tag (addScriptTag): the page's CSP
 * allows only its own scripts (`script-src 'self'`) and refuses an inline one, as it should; the source is
 * evaluated through the DevTools protocol instead, which a page's CSP does not govern, so nothing in the
 * product's policy is loosened for the test.
 */
export async function axeResult(page: Page, scope: string | 'document' = 'document', o: { rules?: readonly string[] } = {}): Promise<AxeResult> {
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.evaluate(fs.readFileSync(AXE_SOURCE, 'utf8'));
    if (!(await page.evaluate(() => 'axe' in window))) throw new Error('axe-core did not load into the page');
  }
  const options = { resultTypes: RESULT_TYPES, ...(o.rules ? { runOnly: [...o.rules] } : {}) };
  return page.evaluate(
    async ({ scope, options }) => {
      const axe = (window as unknown as {
        axe: { run(ctx: unknown, o: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[]; passes: { id: string }[] }> };
      }).axe;
      let context: Document | Element = document;
      if (scope !== 'document') {
        const el = document.querySelector(scope);
        if (!el) throw new Error(`axe: ${scope} is not in the page`);
        context = el;
      }
      const r = await axe.run(context, options);
      return {
        violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.map(String).join(' >> ')) })),
        passes: r.passes.map((p) => p.id),
      };
    },
    { scope, options },
  );
}

/** The violations axe finds in `scope` (axeResult). */
export async function axeViolations(page: Page, scope: string | 'document' = 'document', o: { rules?: readonly string[] } = {}): Promise<AxeViolation[]> {
  return (await axeResult(page, scope, o)).violations;
}

/** Violations as lines a failing test prints: "serious label-content-name-mismatch (1): help — target, …";
 *  '' when there are none, so `expect(describeViolations(v)).toBe('')` shows them all on failure. */
export function describeViolations(violations: readonly AxeViolation[]): string {
  return violations.map((v) => `${v.impact ?? '?'} ${v.id} (${v.targets.length}): ${v.help} — ${v.targets.join(', ')}`).join('\n');
}

/**
 * The page in colour scheme `s`, its new colours painted: a frame for the terminal's, and every colour
 * transition over (columns fade their background in 0.15 s; read halfway, a dark column is still half white,
 * and axe reads computed colours).
 */
export async function settleScheme(page: Page, s: 'light' | 'dark'): Promise<void> {
  await page.emulateMedia({ colorScheme: s });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() =>
    document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== 'running' || !/color|background|border/.test(a.transitionProperty)),
  );
}
