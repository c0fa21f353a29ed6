/**
 * The import snapshot's writes (partition `IMPORT#<a>#<provider>`), as families of the chunk writer
 * (shared/db/usage-writes.ts): the usage cells a connector sync replaces, the settlement corrections
 * (shared/db/settlement.ts) and the reconciliation days whose figures they move. A snapshot cell is a versioned
 * item: every write SETs its fields and `v = v + 1`, conditioned on the version it read (or on not existing yet), so
 * two syncs never both replace the same cell.
 */
import { tableName } from '#shared/db/client.ts';
import { keys, type Key } from '#shared/db/keys.ts';
import type { Built } from '#shared/db/usage-writes.ts';
import { LONG_CONTEXT_WINDOW, UNATTRIBUTED } from '#shared/usage/names.ts';

/** The snapshot of a cell: the counts last imported, the cost they were counted at, a version for the condition. */
export interface StoredCell extends Counts {
  date: string;
  keyId: string | null;
  model: string;
  tier: string;
  longContext?: true;
  projectId: string | null;
  costMicros: bigint;
  version: number;
}

export interface CellChange {
  id: string;
  /** The counts the provider reports now (zeros: the cell is gone). */
  cell: UsageCell;
  previous?: StoredCell;
  delta: Counts;
  costDelta: bigint;
  /** The cell's cost after the change (previous + costDelta). */
  costMicros: bigint;
  /** false: the model has no price (the requests count as unpriced). */
  priced: boolean;
}

/** The counts of one (UTC day, provider key, model, tier) as the provider reports them, in Burnrate's terms. */
export interface Counts {
  requests: number;
  /** All input tokens: uncached, cache reads and cache writes. */
  inputTokens: number;
  cachedInputTokens: number;
  /** 5-minute cache writes (OpenAI: its cache writes). */
  cacheWriteInputTokens: number;
  cacheWrite1hInputTokens: number;
  outputTokens: number;
  /** Web searches (Anthropic `server_tool_use.web_search_requests`), priced per 1,000 from the table. */
  webSearchRequests: number;
  /** A cell of units, not tokens (OpenAI images, speech, storage, …: shared/usage/units.ts): how many. */
  quantity: number;
}

/** One imported cell: a UTC day × provider key (null: no key, the Console or playground) × model × tier (× Anthropic's long-context window). */
export interface UsageCell extends Counts {
  date: string;
  keyId: string | null;
  model: string;
  /**
   * `standard`, `batch`, another service tier (OpenAI: `flex`, `priority`, `scale`; Anthropic: its `service_tier` as
   * reported), each priced at its tier's price (shared/pricing `normalizeTier`), or `embeddings` (OpenAI's embeddings
   * endpoint: its rows never merge with completions of the same model; priced as standard), or the name of an OpenAI
   * usage endpoint beyond tokens (`images`, `vector_stores`, …: shared/usage/units.ts; priced per unit).
   */
  tier: string;
  /** The project (OpenAI) or workspace (Anthropic) the provider reported with the row. */
  projectId: string | null;
  /**
   * Anthropic usage past the long-context threshold (`context_window: "200k-1M"`): its own cell, priced at the
   * model's long-context rates. Absent (never `false`) for the standard window, so cells stored before the window was
   * read keep their identity.
   */
  longContext?: true;
  /**
   * What the provider itself reports the cell cost, in micro-dollars (OpenRouter bills in dollars): the cell is
   * counted at this figure, not priced from the table. Absent: priced from the price table.
   */
  reportedCostMicros?: bigint;
}

type Action = Built['actions'][number];

/**
 * One versioned cell's write: SET every field and `v` to the next version, conditioned on the version read
 * (`previousVersion`), or on the cell not existing when there is none.
 */
export function versionedCellUpdate(key: Key, fields: Record<string, unknown>, previousVersion: number | undefined): Action {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fields).map(([field, value], i) => {
    names[`#f${i}`] = field;
    values[`:f${i}`] = value;
    return `#f${i} = :f${i}`;
  });
  values[':next'] = (previousVersion ?? 0) + 1;
  if (previousVersion !== undefined) values[':v'] = previousVersion;
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET ${[...sets, 'v = :next'].join(', ')}`,
      ConditionExpression: previousVersion !== undefined ? 'v = :v' : 'attribute_not_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/** Family: the snapshot cells a transaction replaces, each conditioned on the version it read (or on not existing). */
export function snapshotCellItems(accountId: string, provider: string, changes: readonly CellChange[]): Built {
  const out: Built = { actions: [], meaning: [] };
  for (const c of changes) {
    const cell = c.cell;
    const keyId = cell.keyId ?? UNATTRIBUTED;
    out.actions.push(
      versionedCellUpdate(
        keys.importCell(accountId, provider, cell.date, keyId, cell.model, cell.tier, cell.longContext ? LONG_CONTEXT_WINDOW : undefined),
        {
          date: cell.date,
          keyId,
          model: cell.model,
          tier: cell.tier,
          ...(cell.longContext ? { longContext: true } : {}),
          projectId: cell.projectId,
          requests: cell.requests,
          inputTokens: cell.inputTokens,
          cachedInputTokens: cell.cachedInputTokens,
          cacheWriteInputTokens: cell.cacheWriteInputTokens,
          cacheWrite1hInputTokens: cell.cacheWrite1hInputTokens,
          outputTokens: cell.outputTokens,
          webSearchRequests: cell.webSearchRequests,
          quantity: cell.quantity,
          costMicros: c.costMicros,
        },
        c.previous?.version,
      ),
    );
    out.meaning.push({ cell: c.id });
  }
  return out;
}

/**
 * Family: each day's computed cost of the connection's keys (reconciliation), moved by the transaction's differences;
 * and its token estimate, moved by the usage cells' differences only (a settlement's corrections move the computed cost).
 */
export function reconDayItems(accountId: string, provider: string, costByDay: ReadonlyMap<string, bigint>, estimateByDay: ReadonlyMap<string, bigint> = costByDay): Built {
  const out: Built = { actions: [], meaning: [] };
  for (const [date, delta] of costByDay) {
    out.actions.push({
      Update: {
        TableName: tableName(),
        Key: keys.importDay(accountId, provider, date),
        UpdateExpression: 'SET #date = :date ADD computedMicros :d, estimatedMicros :e',
        ExpressionAttributeNames: { '#date': 'date' },
        ExpressionAttributeValues: { ':date': date, ':d': delta, ':e': estimateByDay.get(date) ?? 0n },
      },
    });
    out.meaning.push(null);
  }
  return out;
}
