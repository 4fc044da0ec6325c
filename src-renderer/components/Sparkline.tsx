import type { TaskCost } from '../../src-shared/usage/usage.js';
import { sparkline } from '../state/costFigures.js';

/** The drawing's box in CSS pixels: a line of text high, a column of the details panel wide. */
const WIDTH = 160;
const HEIGHT = 28;

/**
 * A task's spend over its claims as a line (inline SVG; no chart library for one polyline). An image to a screen
 * reader, whose name says what the line shows in words: from what, to what, over how long.
 */
export function Sparkline({ cost, testId }: { cost: TaskCost; testId: string }) {
  const s = sparkline(cost, WIDTH, HEIGHT);
  if (!s) return null;
  return (
    <svg className="cost-sparkline" data-testid={testId} data-series={s.series} role="img" aria-label={s.label} width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`}>
      <title>{s.label}</title>
      <polyline points={s.points} fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" strokeLinecap="round" />
    </svg>
  );
}
