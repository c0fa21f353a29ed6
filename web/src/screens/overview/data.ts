/**
 * The Overview's figures, every one a sum the API made over the whole account (GET /spend), for the range the
 * chart shows: the day groups with the previous period (total, forecast, the comparison, the chart), the providers,
 * the top keys. No list page is ever added up here, and no call is made per key: with the open alerts, the screen
 * makes 4 calls. A stacked view of the chart (by provider, by model) is asked for on demand, one filtered call per
 * stack (GET /spend?provider=…&model=…).
 */
import { api, ok, type Schemas } from '../../api/client.ts';
import type { DailySeries } from '../../ui/chart.tsx';
import { providerWords } from '../../ui/format.ts';

type Spend = Schemas['Spend'];
type Group = Spend['groups'][number];
export type DayGroup = Extract<Group, { date: string }>;
export type ProviderGroup = Extract<Group, { provider: string }> & { model?: never };
export type ModelGroup = Extract<Group, { model: string | null }>;
export type KeyGroup = Extract<Group, { hash: string }>;

export const dayGroups = (s: Spend) => s.groups.filter((g): g is DayGroup => 'date' in g);
export const providerGroups = (s: Spend) => s.groups.filter((g): g is ProviderGroup => 'provider' in g && !('model' in g) && !('hash' in g));
export const modelGroups = (s: Spend) => s.groups.filter((g): g is ModelGroup => 'model' in g);
export const keyGroups = (s: Spend) => s.groups.filter((g): g is KeyGroup => 'hash' in g);

export interface OverviewData {
  days: Spend;
  providers: Spend;
  keys: Spend;
}

type SpendQuery = { from: string; to: string; groupBy?: 'day' | 'provider' | 'model' | 'key'; provider?: string; model?: string; compare?: 'previous' };
const spend = (query: SpendQuery) => ok(api.GET('/spend', { params: { query } }));

/** Three calls, side by side (the open alerts are the screen's fourth). */
export async function loadOverview(from: string, to: string): Promise<OverviewData> {
  const [days, providers, keys] = await Promise.all([
    spend({ from, to, groupBy: 'day', compare: 'previous' }),
    spend({ from, to, groupBy: 'provider' }),
    spend({ from, to, groupBy: 'key' }),
  ]);
  return { days, providers, keys };
}

/** How many stacks a view draws at most; the rest of the spend is one "Other" stack (the total minus the stacks). */
export const MAX_STACKS = 5;

export type ChartView = 'total' | 'provider' | 'model';

/** The chart's series for a view: the total alone, or stacked by provider or by model (filtered day sums). */
export async function loadSeries(view: ChartView, data: OverviewData, from: string, to: string): Promise<DailySeries[]> {
  const total = dayGroups(data.days).map((d) => d.costUsd);
  if (view === 'total') return [{ name: 'All spend', values: total }];
  const parts =
    view === 'provider'
      ? providerGroups(data.providers).map((p) => ({ name: providerWords(p.provider), query: { provider: p.provider } }))
      : modelGroups(await spend({ from, to, groupBy: 'model' }))
          // Spend not yet broken down by model (OpenRouter's today) is no stack of its own: it falls in "Other".
          .flatMap((m) => (m.model === null ? [] : [{ name: `${m.provider}/${m.model}`, query: { provider: m.provider, model: m.model } }]));
  const shown = parts.slice(0, MAX_STACKS);
  const sums = await Promise.all(shown.map((p) => spend({ from, to, groupBy: 'day', ...p.query })));
  const series = shown.map((p, i) => ({ name: p.name, values: dayGroups(sums[i]!).map((d) => d.costUsd) }));
  if (parts.length > shown.length) {
    // Micro-dollars, so the difference is exact (no binary remainder like 0.30000000000000004).
    const other = total.map((t, d) => (Math.round(t * 1e6) - series.reduce((s, x) => s + Math.round((x.values[d] ?? 0) * 1e6), 0)) / 1e6);
    series.push({ name: 'Other', values: other });
  }
  return series;
}
