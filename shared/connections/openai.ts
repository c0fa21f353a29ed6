/**
 * OpenAI's organization admin API (https://platform.openai.com/docs/api-reference/usage, https://github.com/openai/openai-openapi): `Authorization: Bearer <admin key>`; usage of completions
 * and embeddings in 1-day buckets grouped by key, model and project (completions also by `batch` and `service_tier`); the key
 * inventory as projects (archived ones included) × their API keys (`owner_project_access=any`); billed costs.
 * Reports page by `next_page`; lists by `after` = `last_id`.
 */
import { count, mergeCells, type ProviderClient } from '#shared/connections/provider-client.ts';
import { dollarsToPicos } from '#shared/connections/decimal.ts';
import { nextPageOf, ProviderBadResponse, providerHttp, type ProviderHttpOptions } from '#shared/connections/http.ts';
import { FAN_OUT, inPool, itemBudget, readPages } from '#shared/connections/pages.ts';
import type { BilledDay, BillRow, ProviderKey, UsageCell } from '#shared/connections/model.ts';
import { tierOf } from '#shared/usage/tiers.ts';
import { UNIT_ENDPOINTS, unitModelName, type UnitEndpoint } from '#shared/usage/units.ts';

/** The costs endpoint's grouping: the provider's dollars per key and line item (repeated `group_by`, the reference's form). */
export const COSTS_GROUP_BY = ['project_id', 'line_item', 'api_key_id'] as const;

const DAY_S = 86_400;
const unix = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
const dayOf = (startTime: unknown) => {
  if (typeof startTime !== 'number') throw new ProviderBadResponse('A usage bucket has no start_time.');
  return new Date(Math.floor(startTime / DAY_S) * DAY_S * 1000).toISOString().slice(0, 10);
};

interface Page {
  data?: { start_time?: number; results?: Record<string, unknown>[] }[];
  has_more?: boolean;
  next_page?: string | null;
}

interface List<T> {
  data?: T[];
  has_more?: boolean;
  last_id?: string | null;
}

/** The client, and the organization's projects (archived ones too) for organization.ts. */
export function openAiClient(base: string, adminKey: string, options: ProviderHttpOptions = {}): ProviderClient & { listProjects(): Promise<{ id: string; name?: string; status?: string }[]> } {
  const http = providerHttp(base, { authorization: `Bearer ${adminKey}` }, adminKey, options);
  const url = (path: string, params: [string, string][]) => {
    const u = new URL(`${base}${path}`);
    for (const [k, v] of params) u.searchParams.append(k, v);
    return u;
  };

  /** Every item of a list endpoint (`limit`, `after` = the page's `last_id`), within the bounds of pages.ts. */
  async function listAll<T extends { id: string }>(path: string, params: [string, string][]): Promise<T[]> {
    return readPages<T>(
      path,
      async (after) => {
        const body = (await http.getJson(url(path, [...params, ['limit', '100'], ...(after ? ([['after', after]] as [string, string][]) : [])]))) as List<T>;
        const page = body.data ?? [];
        const last = body.last_id ?? page[page.length - 1]?.id;
        return { items: page, next: body.has_more === true && page.length > 0 && typeof last === 'string' ? last : undefined };
      },
      { idOf: (item) => (typeof item?.id === 'string' ? item.id : undefined) },
    );
  }

  /** Every bucket of a report over [from, toExclusive), page by page (`next_page`), within the bounds of pages.ts. */
  async function report(path: string, params: [string, string][], from: string, toExclusive: string, limit: number): Promise<NonNullable<Page['data']>> {
    const fixed: [string, string][] = [
      ['start_time', String(unix(from))],
      ['end_time', String(unix(toExclusive))],
      ['bucket_width', '1d'],
      ...params,
      ['limit', String(limit)],
    ];
    return readPages(
      path,
      async (page) => {
        const body = (await http.getJson(url(path, page ? [...fixed, ['page', page]] : fixed))) as Page;
        return { items: body.data ?? [], next: nextPageOf(body, path) };
      },
      { weight: (bucket) => Math.max(1, bucket.results?.length ?? 0) },
    );
  }

  /** The organization's projects, archived ones included. */
  const listProjects = () => listAll<{ id: string; name?: string; status?: string }>('/v1/organization/projects', [['include_archived', 'true']]);

  async function usage(path: string, groupBy: string[], from: string, toExclusive: string, tierOf: (r: Record<string, unknown>) => string): Promise<UsageCell[]> {
    const buckets = await report(path, groupBy.map((g) => ['group_by', g] as [string, string]), from, toExclusive, 31);
    const cells: UsageCell[] = [];
    for (const bucket of buckets) {
      const date = dayOf(bucket.start_time);
      for (const r of bucket.results ?? []) {
        const cached = count(r.input_cached_tokens, 'input_cached_tokens');
        const writes = count(r.input_cache_write_tokens, 'input_cache_write_tokens');
        cells.push({
          date,
          keyId: typeof r.api_key_id === 'string' ? r.api_key_id : null,
          model: typeof r.model === 'string' && r.model ? r.model.toLowerCase() : 'unknown',
          tier: tierOf(r),
          projectId: typeof r.project_id === 'string' ? r.project_id : null,
          requests: count(r.num_model_requests, 'num_model_requests'),
          // input_tokens includes cached and cache-write tokens (a row that says less is read as at least their sum).
          inputTokens: Math.max(count(r.input_tokens, 'input_tokens'), cached + writes),
          cachedInputTokens: cached,
          cacheWriteInputTokens: writes,
          cacheWrite1hInputTokens: 0,
          outputTokens: count(r.output_tokens, 'output_tokens'),
          webSearchRequests: 0,
          quantity: 0,
        });
      }
    }
    return cells;
  }

  /** One usage endpoint beyond tokens: a cell per (day, key, model) with its quantity in the endpoint's unit. */
  async function unitUsage(e: UnitEndpoint, from: string, toExclusive: string): Promise<UsageCell[]> {
    const buckets = await report(`/v1/organization/usage/${e.name}`, e.groupBy.map((g) => ['group_by', g] as [string, string]), from, toExclusive, 31);
    const cells: UsageCell[] = [];
    for (const bucket of buckets) {
      const date = dayOf(bucket.start_time);
      for (const r of bucket.results ?? []) {
        cells.push({
          date,
          keyId: typeof r.api_key_id === 'string' ? r.api_key_id : null,
          model: unitModelName(e.name, typeof r.model === 'string' && r.model ? r.model.toLowerCase() : null),
          tier: e.name,
          projectId: typeof r.project_id === 'string' ? r.project_id : null,
          requests: e.requests ? count(r[e.requests], e.requests) : 0,
          inputTokens: 0,
          cachedInputTokens: 0,
          cacheWriteInputTokens: 0,
          cacheWrite1hInputTokens: 0,
          outputTokens: 0,
          webSearchRequests: 0,
          quantity: count(r[e.quantity], e.quantity),
        });
      }
    }
    return cells;
  }

  return {
    provider: 'openai',
    listProjects,
    async check() {
      await http.getJson(url('/v1/organization/projects', [['limit', '1']]));
    },
    async listKeys() {
      const projects = await listProjects();
      // A list of keys per project, FAN_OUT at a time, every project's keys counted together against the bound.
      const perProject: ProviderKey[][] = [];
      const count = itemBudget('API keys of /v1/organization/projects/{id}/api_keys');
      await inPool(projects, FAN_OUT, async (p, i) => {
        const keys = await listAll<{ id: string; name?: string; redacted_value?: string }>(
          `/v1/organization/projects/${encodeURIComponent(p.id)}/api_keys`,
          [['owner_project_access', 'any']],
        );
        count(keys.length);
        perProject[i] = keys.map(
          (k): ProviderKey => ({
            id: k.id,
            name: typeof k.name === 'string' && k.name ? k.name : null,
            redactedValue: typeof k.redacted_value === 'string' ? k.redacted_value : null,
            project: { id: p.id, name: typeof p.name === 'string' && p.name ? p.name : p.id },
            status: p.status === 'archived' ? 'archived' : 'active',
          }),
        );
      });
      return perProject.flat();
    },
    async readUsage(from, toExclusive) {
      const [completions, embeddings, ...units] = await Promise.all([
        // Grouped by batch AND service_tier: batch rows report service_tier "default" and are priced at the batch
        // price once; the others at their tier's price (default/auto: standard, flex, priority, scale).
        usage('/v1/organization/usage/completions', ['api_key_id', 'model', 'project_id', 'batch', 'service_tier'], from, toExclusive, (r) =>
          tierOf({ batch: r.batch === true, service_tier: typeof r.service_tier === 'string' ? r.service_tier : null }),
        ),
        usage('/v1/organization/usage/embeddings', ['api_key_id', 'model', 'project_id'], from, toExclusive, () => 'embeddings'),
        // Images, speech, transcription, moderation, storage, code interpreter, web and file search (shared/usage/units.ts).
        ...UNIT_ENDPOINTS.map((e) => unitUsage(e, from, toExclusive)),
      ]);
      return mergeCells([...completions, ...embeddings, ...units.flat()]);
    },
    async readBilled(from, toExclusive) {
      const buckets = await report('/v1/organization/costs', COSTS_GROUP_BY.map((g) => ['group_by', g] as [string, string]), from, toExclusive, 180);
      const byDay = new Map<string, BillRow[]>();
      for (const bucket of buckets) {
        const date = dayOf(bucket.start_time);
        const rows = byDay.get(date) ?? [];
        byDay.set(date, rows);
        for (const r of bucket.results ?? []) {
          const amount = r.amount as { value?: unknown; currency?: unknown } | undefined;
          if (typeof amount?.currency === 'string' && amount.currency.toLowerCase() !== 'usd') throw new ProviderBadResponse(`A cost is in ${amount.currency.slice(0, 8)}, not USD.`);
          if (typeof amount?.value !== 'number') continue;
          rows.push({
            date,
            keyId: typeof r.api_key_id === 'string' ? r.api_key_id : null,
            projectId: typeof r.project_id === 'string' ? r.project_id : null,
            line: typeof r.line_item === 'string' && r.line_item ? r.line_item : 'other',
            picos: dollarsToPicos(amount.value),
          });
        }
      }
      return [...byDay].map(([date, rows]): BilledDay => ({ date, rows }));
    },
  };
}
