/** The chart's legend (issue 18: it showed "—" until hovered, and the hover had no day total). */
import { describe, expect, it } from 'vitest';
import { legendValues } from '../../web/src/ui/legend.ts';

const days = ['2026-11-01', '2026-11-02', '2026-11-03'];
const series = [
  { name: 'openai', values: [1.5, 0, 2.25] },
  { name: 'anthropic', values: [0.004, 3, 0] },
];

describe('legendValues', () => {
  it("shows the range's totals before any hover", () => {
    expect(legendValues(days, series, null)).toEqual({ day: 'Nov 1, 2026 – Nov 3, 2026 · total $6.75', values: ['$3.75', '$3.00'] });
  });
  it("shows the hovered day's values and its total", () => {
    expect(legendValues(days, series, 0)).toEqual({ day: 'Nov 1, 2026 · total $1.50', values: ['$1.50', '$0.004'] });
  });
});
