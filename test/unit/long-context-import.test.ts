/**
 * Anthropic long-context usage imported from a connection: the usage report grouped by `context_window`, the
 * `200k-1M` window a cell of its own priced at the model's long-context rates, while cells stored before the window
 * was read keep their identity (a re-sync of unchanged usage writes nothing).
 */
import { describe, expect, it } from 'vitest';
import { anthropicClient } from '#shared/connections/anthropic.ts';
import { cellId, diffCells, type StoredCell } from '#shared/connections/diff.ts';
import { mergeCells } from '#shared/connections/provider-client.ts';
import { keys } from '#shared/db/keys.ts';
import { normalizeTier, priceUsage } from '#shared/pricing/pricing.ts';
import type { UsageCell } from '#shared/connections/model.ts';

const M = 1_000_000;

/** One usage bucket with the same key, workspace, model and tier in both windows. */
function usagePage() {
  const row = (window: string, uncached: number, output: number) => ({
    api_key_id: 'apikey_01long',
    workspace_id: 'wrkspc_01prod',
    model: 'claude-sonnet-4-5-20250929',
    service_tier: 'standard',
    context_window: window,
    inference_geo: null,
    uncached_input_tokens: uncached,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    output_tokens: output,
    server_tool_use: { web_search_requests: 0 },
  });
  const body = { data: [{ starting_at: '2026-11-20T00:00:00Z', ending_at: '2026-11-21T00:00:00Z', results: [row('0-200k', M, M), row('200k-1M', 2 * M, M)] }], has_more: false, next_page: null };
  return (async () => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })) as typeof fetch;
}

/** What the importer charges a cell (phases/run.ts): its tier's price, long context as the cell says. */
const price = (c: UsageCell) => {
  const cost = priceUsage({ ...c, provider: 'anthropic', tier: normalizeTier(c.tier), longContext: c.longContext === true });
  return { costMicros: BigInt(cost.costMicros), priced: true };
};

describe('Anthropic long-context usage in the importer', () => {
  it('reads the two windows as two cells, the long one priced at the long-context rates', async () => {
    const cells = await anthropicClient('https://api.anthropic.com', 'sk-ant-admin01-test', { fetch: usagePage() }).readUsage('2026-11-20', '2026-11-21');
    expect(cells).toHaveLength(2);
    const long = cells.find((c) => c.longContext);
    const standard = cells.find((c) => !c.longContext);
    expect(standard).toMatchObject({ inputTokens: M, outputTokens: M });
    expect(standard).not.toHaveProperty('longContext');
    expect(long).toMatchObject({ longContext: true, inputTokens: 2 * M, outputTokens: M });
    // Sonnet 4.5: $3 + $15 per 1M in the standard window; $6 + $22.50 per 1M past 200K input tokens.
    expect(price(standard!).costMicros).toBe(18_000_000n);
    expect(price(long!).costMicros).toBe(12_000_000n + 22_500_000n);
  });

  it('keeps a standard cell stored before windows were read under the same identity and key; a long cell is apart', () => {
    const base: UsageCell = { date: '2026-11-20', keyId: 'apikey_01long', model: 'claude-sonnet-4-5-20250929', tier: 'standard', projectId: 'wrkspc_01prod', requests: 0, inputTokens: M, cachedInputTokens: 0, cacheWriteInputTokens: 0, cacheWrite1hInputTokens: 0, outputTokens: M, webSearchRequests: 0, quantity: 0 };
    const long: UsageCell = { ...base, longContext: true, inputTokens: 2 * M };
    expect(cellId(base)).toBe('2026-11-20#apikey_01long#claude-sonnet-4-5-20250929#standard');
    expect(cellId(long)).toBe('2026-11-20#apikey_01long#claude-sonnet-4-5-20250929#standard#200k-1M');
    expect(keys.importCell('a', 'anthropic', base.date, 'apikey_01long', base.model, base.tier).sk).toBe('CELL#2026-11-20#apikey_01long#claude-sonnet-4-5-20250929#standard');
    expect(keys.importCell('a', 'anthropic', base.date, 'apikey_01long', base.model, base.tier, '200k-1M').sk).toBe('CELL#2026-11-20#apikey_01long#claude-sonnet-4-5-20250929#standard#200k-1M');
    expect(mergeCells([base, long])).toHaveLength(2);

    // The snapshot holds the standard cell as an older sync stored it (no window): re-reading it changes nothing;
    // the long cell is new, at its own price.
    const stored: StoredCell = { ...base, costMicros: 18_000_000n, version: 1 };
    const changes = diffCells([base, long], new Map([[cellId(stored), stored]]), price);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ id: cellId(long), costDelta: 34_500_000n });

    // A long cell that disappears from a complete read gives back what it holds, as a long cell.
    const storedLong: StoredCell = { ...long, costMicros: 34_500_000n, version: 1 };
    const gone = diffCells([base], new Map([[cellId(stored), stored], [cellId(storedLong), storedLong]]), price);
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatchObject({ id: cellId(long), costDelta: -34_500_000n, cell: { longContext: true, inputTokens: 0 } });
  });
});
