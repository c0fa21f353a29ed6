/**
 * Anthropic's Admin API (https://platform.claude.com/docs/en/api/admin): headers `x-api-key` and `anthropic-version: 2023-06-01`; the messages
 * usage report in 1-day buckets grouped (`group_by[]`) by key, workspace, model, service tier and context window; the organization's
 * API keys and the workspaces that name them (archived ones included); the cost report, whose `amount` is a decimal
 * string in CENTS. Reports page by `next_page`; the key and workspace lists by `after_id` = `last_id`. The report has
 * no request count: imported Anthropic rows count 0 requests.
 */
import { count, mergeCells, type ProviderClient } from '#shared/connections/provider-client.ts';
import { centsToPicos } from '#shared/connections/decimal.ts';
import { nextPageOf, ProviderBadResponse, providerHttp, type ProviderHttpOptions } from '#shared/connections/http.ts';
import { readPages } from '#shared/connections/pages.ts';
import { ANTHROPIC_VERSION } from '#shared/connections/endpoints.ts';
import { LONG_CONTEXT_WINDOW, type BilledDay, type BillRow, type ProviderKey, type ProviderKeyStatus, type UsageCell } from '#shared/connections/model.ts';

/** The cost report's grouping (`group_by[]`, the reference's form): per workspace and description (model, tier, cost type). */
export const COST_REPORT_GROUP_BY = ['workspace_id', 'description'] as const;

/**
 * The usage report's grouping: per key, workspace, model, service tier and context window (`0-200k` / `200k-1M`: usage
 * past 200K input tokens is billed at the model's long-context rates, so it is a cell of its own).
 */
export const USAGE_GROUP_BY = ['api_key_id', 'workspace_id', 'model', 'service_tier', 'context_window'] as const;

export { ANTHROPIC_VERSION };
const STATUSES = new Set<ProviderKeyStatus>(['active', 'inactive', 'archived', 'expired']);

interface Page {
  data?: { starting_at?: string; results?: Record<string, unknown>[] }[];
  has_more?: boolean;
  next_page?: string | null;
}

const dayOf = (startingAt: unknown) => {
  const at = typeof startingAt === 'string' ? Date.parse(startingAt) : Number.NaN;
  if (Number.isNaN(at)) throw new ProviderBadResponse('A usage bucket has no starting_at.');
  return new Date(at).toISOString().slice(0, 10);
};

/** How a key of the default workspace is named (its usage and its key say `workspace_id: null`). */
export const DEFAULT_WORKSPACE_NAME = 'Default workspace';
/** The project id of a key of the default workspace when the provider gives no id for it. */
export const DEFAULT_WORKSPACE_ID = 'default';

/**
 * A key's workspace `{id, name}`: `workspace_id` (null: the default workspace), or the newer `scope` (the default
 * workspace's real id, which the workspace list leaves out); an organization-scoped key has none.
 */
function workspaceOf(k: Record<string, unknown>, names: Map<string, string>): ProviderKey['project'] {
  const scope = k.scope as { type?: unknown; workspace_id?: unknown } | null | undefined;
  if (scope?.type === 'organization') return null;
  const scoped = typeof scope?.workspace_id === 'string' ? scope.workspace_id : null;
  if (typeof k.workspace_id === 'string') return { id: k.workspace_id, name: names.get(k.workspace_id) ?? k.workspace_id };
  if (scoped !== null && names.has(scoped)) return { id: scoped, name: names.get(scoped)! };
  // `workspace_id: null`, or a scope whose workspace the list (without the default one) does not name.
  return { id: scoped ?? DEFAULT_WORKSPACE_ID, name: DEFAULT_WORKSPACE_NAME };
}

export function anthropicClient(base: string, adminKey: string, options: ProviderHttpOptions = {}): ProviderClient {
  const http = providerHttp(base, { 'x-api-key': adminKey, 'anthropic-version': ANTHROPIC_VERSION }, adminKey, options);
  const url = (path: string, params: [string, string][]) => {
    const u = new URL(`${base}${path}`);
    for (const [k, v] of params) u.searchParams.append(k, v);
    return u;
  };

  /** Every bucket of a report, page by page (`next_page`), within the bounds of pages.ts. */
  async function report(path: string, params: [string, string][], from: string, toExclusive: string): Promise<NonNullable<Page['data']>> {
    const fixed: [string, string][] = [
      ['starting_at', `${from}T00:00:00Z`],
      ['ending_at', `${toExclusive}T00:00:00Z`],
      ['bucket_width', '1d'],
      ...params,
      ['limit', '31'],
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

  /** Every item of an Admin API list: `limit` 1000, pages by `after_id` = the `last_id` of the page before; bounded (pages.ts). */
  async function listAll(path: string, params: [string, string][]): Promise<Record<string, unknown>[]> {
    return readPages<Record<string, unknown>>(
      path,
      async (after) => {
        const body = (await http.getJson(url(path, [...params, ['limit', '1000'], ...(after ? ([['after_id', after]] as [string, string][]) : [])]))) as {
          data?: Record<string, unknown>[];
          has_more?: boolean;
          last_id?: string | null;
        };
        const page = body.data ?? [];
        if (body.has_more !== true || page.length === 0) return { items: page };
        const last = body.last_id ?? page[page.length - 1]!.id;
        if (typeof last !== 'string') throw new ProviderBadResponse(`The provider said ${path} has more items but gave no last_id.`);
        return { items: page, next: last };
      },
      { idOf: (item) => (typeof item?.id === 'string' ? item.id : undefined) },
    );
  }

  return {
    provider: 'anthropic',
    async check() {
      await http.getJson(url('/v1/organizations/api_keys', [['limit', '1']]));
    },
    async listKeys() {
      // Workspace names first (archived ones too: their keys stay listed); the default workspace is not in the list.
      const workspaces = new Map<string, string>();
      for (const w of await listAll('/v1/organizations/workspaces', [['include_archived', 'true']])) {
        if (typeof w.id === 'string') workspaces.set(w.id, typeof w.name === 'string' && w.name ? w.name : w.id);
      }
      return (await listAll('/v1/organizations/api_keys', [])).flatMap((k): ProviderKey[] =>
        typeof k.id === 'string'
          ? [
              {
                id: k.id,
                name: typeof k.name === 'string' && k.name ? k.name : null,
                redactedValue: typeof k.partial_key_hint === 'string' ? k.partial_key_hint : null,
                project: workspaceOf(k, workspaces),
                status: STATUSES.has(k.status as ProviderKeyStatus) ? (k.status as ProviderKeyStatus) : 'active',
              },
            ]
          : [],
      );
    },
    async readUsage(from, toExclusive) {
      const groupBy = USAGE_GROUP_BY.map((g) => ['group_by[]', g] as [string, string]);
      const buckets = await report('/v1/organizations/usage_report/messages', groupBy, from, toExclusive);
      const cells: UsageCell[] = [];
      for (const bucket of buckets) {
        const date = dayOf(bucket.starting_at);
        for (const r of bucket.results ?? []) {
          const creation = (r.cache_creation ?? {}) as Record<string, unknown>;
          const uncached = count(r.uncached_input_tokens, 'uncached_input_tokens');
          const reads = count(r.cache_read_input_tokens, 'cache_read_input_tokens');
          const writes5m = count(creation.ephemeral_5m_input_tokens, 'cache_creation.ephemeral_5m_input_tokens');
          const writes1h = count(creation.ephemeral_1h_input_tokens, 'cache_creation.ephemeral_1h_input_tokens');
          cells.push({
            date,
            keyId: typeof r.api_key_id === 'string' ? r.api_key_id : null,
            model: typeof r.model === 'string' && r.model ? r.model.toLowerCase() : 'unknown',
            tier: typeof r.service_tier === 'string' && r.service_tier ? r.service_tier : 'standard',
            projectId: typeof r.workspace_id === 'string' ? r.workspace_id : null,
            ...(r.context_window === LONG_CONTEXT_WINDOW ? { longContext: true as const } : {}),
            requests: 0,
            inputTokens: uncached + reads + writes5m + writes1h,
            cachedInputTokens: reads,
            cacheWriteInputTokens: writes5m,
            cacheWrite1hInputTokens: writes1h,
            outputTokens: count(r.output_tokens, 'output_tokens'),
            webSearchRequests: count((r.server_tool_use as Record<string, unknown> | null | undefined)?.web_search_requests, 'server_tool_use.web_search_requests'),
            quantity: 0,
          });
        }
      }
      return mergeCells(cells);
    },
    async readBilled(from, toExclusive) {
      const buckets = await report('/v1/organizations/cost_report', COST_REPORT_GROUP_BY.map((g) => ['group_by[]', g] as [string, string]), from, toExclusive);
      const byDay = new Map<string, BillRow[]>();
      const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
      for (const bucket of buckets) {
        const date = dayOf(bucket.starting_at);
        const rows = byDay.get(date) ?? [];
        byDay.set(date, rows);
        for (const r of bucket.results ?? []) {
          if (typeof r.amount !== 'string') continue;
          rows.push({
            date,
            projectId: text(r.workspace_id),
            line: text(r.description) ?? text(r.cost_type) ?? 'other',
            costType: text(r.cost_type) ?? 'other',
            model: text(r.model),
            tier: text(r.service_tier),
            ...(r.context_window === LONG_CONTEXT_WINDOW ? { longContext: true as const } : {}),
            picos: centsToPicos(r.amount),
          });
        }
      }
      return [...byDay].map(([date, rows]): BilledDay => ({ date, rows }));
    },
  };
}
