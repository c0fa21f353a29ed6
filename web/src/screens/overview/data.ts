/**
 * The Overview's figures, every one a sum the API made over the whole account (GET /spend), for the range the
 * chart shows: the day groups (total, forecast, the chart), the providers (the legend's split), the top keys.
 * No list page is ever added up here, and no call is made per key.
 */
import { api, ok, type Schemas } from '../../api/client.ts';

type Spend = Schemas['Spend'];
type Group = Spend['groups'][number];
export type DayGroup = Extract<Group, { date: string }>;
export type ProviderGroup = Extract<Group, { provider: string }> & { model?: never };
export type ModelGroup = Extract<Group, { model: string }>;
export type KeyGroup = Extract<Group, { hash: string }>;

export const dayGroups = (s: Spend) => s.groups.filter((g): g is DayGroup => 'date' in g);
export const providerGroups = (s: Spend) => s.groups.filter((g): g is ProviderGroup => 'provider' in g && !('model' in g) && !('hash' in g));
export const keyGroups = (s: Spend) => s.groups.filter((g): g is KeyGroup => 'hash' in g);

export interface OverviewData {
  days: Spend;
  providers: Spend;
  keys: Spend;
}

/** Three calls, side by side (the open alerts are the screen's fourth). */
export async function loadOverview(from: string, to: string): Promise<OverviewData> {
  const spend = (groupBy: 'day' | 'provider' | 'key') => ok(api.GET('/spend', { params: { query: { from, to, groupBy } } }));
  const [days, providers, keys] = await Promise.all([spend('day'), spend('provider'), spend('key')]);
  return { days, providers, keys };
}
