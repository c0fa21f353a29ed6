/**
 * Settlement (pure): what a provider bills for a UTC day, attributed to the connection's keys, and what that means
 * for the aggregates. A settled day's cost of a key is the bill's lines that belong to it; the aggregates hold the
 * token estimate (written by the usage import) plus a correction per (day, key, row) — row: the model, or the
 * provider's line where no model names it ("Vector storage", "Code Execution Usage") — that brings each row
 * to the bill. This module computes, per settled day, the bill per (key, row) and the reconciliation lines; the
 * writer (settlement-writes.ts) turns the targets into differences against the corrections it applied last.
 *
 * - OpenAI bills per `api_key_id` × `line_item` × `project_id`: each amount belongs to its key (null: the provider's
 *   `unattributed` key); a line item of usage beyond tokens (`"dall-e-3, images"`, `"Vector storage"`) is its
 *   unit row (`images:dall-e-3`, `vector_stores`); a line item `"<model>, <what>"` whose model the day's usage has is
 *   that model's row.
 * - Anthropic bills per workspace × description (model, service tier, context window, cost type): a token bill of a
 *   (workspace, model, tier, window) is allocated to the keys with usage of the same (day, workspace, model, tier,
 *   window) in proportion to their
 *   estimated cost (their tokens when none of them is priced), largest remainder, exact to the micro-dollar; web
 *   search by the keys' web-search requests; anything no key explains (code execution, session usage, a model no key
 *   used) to the workspace's share of the `unattributed` key. Priority Tier is never in Anthropic's cost report: its
 *   usage keeps its estimate, on its own line.
 */
import { splitLineItem, unitEndpointOf, unitRowOfLineItem } from '#shared/usage/units.ts';
import { priceLines } from '#shared/pricing/pricing.ts';
import { costOfLines } from '#shared/pricing/lines.ts';
import type { LineReason, Line } from '#shared/db/settlement.ts';

export type { LineReason, Line };

/** One result row of a provider's cost endpoint, amounts in 10^-14 $ (picos: shared/connections/decimal.ts). */
export interface BillRow {
  date: string;
  /** OpenAI: the row's `api_key_id` (null: no key). Anthropic has no key dimension: undefined. */
  keyId?: string | null;
  /** OpenAI project, Anthropic workspace (null: none, or Anthropic's default workspace). */
  projectId: string | null;
  /** OpenAI `line_item`; Anthropic `description`. */
  line: string;
  /** Anthropic: `tokens`, `web_search`, `code_execution`, `session_usage`, ... (OpenAI: undefined). */
  costType?: string;
  /** Anthropic token rows: the model and service tier (`standard` | `batch`). */
  model?: string | null;
  tier?: string | null;
  /** Anthropic token rows of the `200k-1M` context window (billed at the long-context rates). */
  longContext?: true;
  picos: bigint;
}

/** What the provider's cost endpoint says about one UTC day: its rows (none: an empty bucket). */
export interface BilledDay {
  date: string;
  rows: BillRow[];
}

/**
 * A usage cell's estimate: what the provider's usage report says now, priced (every key, untracked ones too: they
 * weigh in an allocation even though their spend is not shown), or what the snapshot holds (the corrections).
 */
export interface Estimate {
  date: string;
  keyId: string | null;
  projectId: string | null;
  model: string;
  tier: string;
  /** Anthropic usage of the `200k-1M` context window. */
  longContext?: true;
  costMicros: bigint;
  /** Tokens (the weight when no key's usage of a model is priced). */
  tokens: bigint;
  webSearchRequests?: number;
}

/** The bill of one settled day: per (key, row) the billed micro-dollars, its total and its lines. */
export interface DaySettlement {
  date: string;
  /** `keyId|row` → µ$ (keyId `null` for the unattributed key: see rowKey). */
  targets: Map<string, { keyId: string | null; row: string; micros: bigint }>;
  billedMicros: bigint;
  lines: Line[];
}

export const PICOS_PER_MICRO = 100_000_000n;

const roundPicos = (picos: bigint): bigint => {
  const half = PICOS_PER_MICRO / 2n;
  return picos >= 0n ? (picos + half) / PICOS_PER_MICRO : -((-picos + half) / PICOS_PER_MICRO);
};

/**
 * Splits `total` over `weights` in proportion, largest remainder: integers that sum to `total` exactly, each within
 * one unit of its exact share. Zero or negative weights take nothing; all weights zero → everything in `fallback`
 * (its index). Negative totals (credits) split the same way, by magnitude.
 */
export function largestRemainder(total: bigint, weights: readonly bigint[]): bigint[] | undefined {
  const positive = weights.map((w) => (w > 0n ? w : 0n));
  const sum = positive.reduce((a, b) => a + b, 0n);
  if (sum === 0n) return undefined;
  const sign = total < 0n ? -1n : 1n;
  const magnitude = total * sign;
  const shares = positive.map((w) => (magnitude * w) / sum);
  const remainders = positive.map((w, i) => ({ i, r: (magnitude * w) % sum }));
  let left = magnitude - shares.reduce((a, b) => a + b, 0n);
  // Largest remainder first; ties by the larger weight, then by position (deterministic).
  remainders.sort((a, b) => (a.r !== b.r ? (b.r > a.r ? 1 : -1) : positive[b.i]! !== positive[a.i]! ? (positive[b.i]! > positive[a.i]! ? 1 : -1) : a.i - b.i));
  for (const { i } of remainders) {
    if (left === 0n) break;
    if (positive[i] === 0n) continue;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares.map((s) => s * sign);
}

const keyOf = (keyId: string | null, row: string) => `${keyId ?? ''}|${row}`;

function addTarget(s: DaySettlement, keyId: string | null, row: string, micros: bigint): void {
  const id = keyOf(keyId, row);
  const t = s.targets.get(id);
  if (t) t.micros += micros;
  else s.targets.set(id, { keyId, row, micros });
}

class Lines {
  private byName = new Map<string, Line>();
  add(line: string, estimated: bigint, billed: bigint | null, reason: LineReason | null = null): void {
    const l = this.byName.get(line);
    if (!l) this.byName.set(line, { line, estimatedMicros: estimated, billedMicros: billed, reason });
    else {
      l.estimatedMicros += estimated;
      if (billed !== null) l.billedMicros = (l.billedMicros ?? 0n) + billed;
      if (reason && !l.reason) l.reason = reason;
    }
  }
  list(): Line[] {
    return [...this.byName.values()].sort((a, b) => (a.line < b.line ? -1 : a.line > b.line ? 1 : 0));
  }
}

/** The model a line item names (`"gpt-4.1-2025-04-14, cached input (batch)"`, `"priority | gpt-5.1, output"` → the model), if the day's usage has it. */
export function modelOfLineItem(line: string, models: ReadonlySet<string>): string | undefined {
  const { model } = splitLineItem(line);
  return model !== null && models.has(model) ? model : undefined;
}

/**
 * The row an OpenAI line item bills: a unit row (`"dall-e-3, images"` → `images:dall-e-3`, shared/usage/units.ts),
 * else the model it names if the day's usage has it, else the line item itself.
 */
export const rowOfLineItem = (line: string, models: ReadonlySet<string>): string => unitRowOfLineItem(line) ?? modelOfLineItem(line, models) ?? line;

/**
 * OpenAI: the bill of one day per (key, row), amounts rounded to the micro-dollar once per (key, row). `tracked`
 * tells whether a key's spend may be shown (an untracked key's bill stays out of the aggregates, on its own line).
 */
export function settleOpenAiDay(day: BilledDay, estimates: readonly Estimate[], tracked: (keyId: string | null) => boolean): DaySettlement {
  const models = new Set(estimates.map((e) => e.model));
  // A unit line without its model ("web search tool calls") bills the key's one row of that endpoint, if it has one.
  const unitRows = new Map<string, Set<string>>();
  for (const e of estimates) {
    if (!unitEndpointOf(e.tier)) continue;
    const id = keyOf(e.keyId, e.tier);
    unitRows.set(id, (unitRows.get(id) ?? new Set()).add(e.model));
  }
  const picos = new Map<string, { keyId: string | null; row: string; picos: bigint }>();
  for (const r of day.rows) {
    const keyId = r.keyId ?? null;
    let row = rowOfLineItem(r.line, models);
    const ofKey = unitEndpointOf(row) ? unitRows.get(keyOf(keyId, row)) : undefined;
    if (ofKey?.size === 1) row = [...ofKey][0]!;
    const id = keyOf(keyId, row);
    const p = picos.get(id);
    if (p) p.picos += r.picos;
    else picos.set(id, { keyId, row, picos: r.picos });
  }
  const s: DaySettlement = { date: day.date, targets: new Map(), billedMicros: 0n, lines: [] };
  const lines = new Lines();
  const estimateOf = new Map<string, bigint>();
  for (const e of estimates) if (tracked(e.keyId)) estimateOf.set(keyOf(e.keyId, e.model), (estimateOf.get(keyOf(e.keyId, e.model)) ?? 0n) + e.costMicros);
  for (const [id, { keyId, row, picos: p }] of picos) {
    const micros = roundPicos(p);
    s.billedMicros += micros;
    if (!tracked(keyId)) {
      lines.add(row, 0n, micros, 'plan_key_limit');
      continue;
    }
    addTarget(s, keyId, row, micros);
    const estimated = estimateOf.get(id) ?? 0n;
    lines.add(row, estimated, micros, estimated === 0n ? (models.has(row) ? 'unpriced' : 'not_estimated') : null);
  }
  // Estimates the bill has no row for: their rows go to 0 (the bill wins), shown with what was estimated.
  for (const e of estimates) {
    if (!tracked(e.keyId) || picos.has(keyOf(e.keyId, e.model))) continue;
    addTarget(s, e.keyId, e.model, 0n);
    lines.add(e.model, e.costMicros, 0n);
  }
  s.lines = lines.list();
  return s;
}

/** Anthropic's line of a model and tier as the reconciliation names it (`claude-opus-4-5 (batch)`). */
export const anthropicLine = (model: string, tier: string, longContext = false) => `${tier === 'standard' ? model : `${model} (${tier})`}${longContext ? ', long context' : ''}`;

/** The usage tier a cost report's `service_tier` bills: only standard and batch exist there. */
const billedTier = (tier: string) => (tier === 'batch' ? 'batch' : 'standard');

export const PRIORITY_TIER = 'priority';

/**
 * Anthropic: the day's bill allocated to keys. Token rows per (workspace, model, tier) over the keys' estimates of
 * the same (workspace, model, tier); web search by web-search requests; the rest to the workspace's share of the
 * unattributed key (row: the model's line, or the cost's description). Priority Tier usage is not billed: its
 * estimate stays, on its own line.
 */
/** The part of an Anthropic estimate that is its web searches, at the table's price (never more than the estimate: an unpriced call counts 0). */
function webSearchMicros(e: Estimate): bigint {
  if ((e.webSearchRequests ?? 0) <= 0 || e.costMicros <= 0n) return 0n;
  // The estimate's web_search price line (shared/pricing/lines.ts), the one function that splits a usage into lines.
  const lines = priceLines({ provider: 'anthropic', model: e.model, inputTokens: 0, outputTokens: 0, webSearchRequests: e.webSearchRequests! });
  const micros = costOfLines(lines.filter((l) => l.line === 'web_search')).costMicros;
  return micros > e.costMicros ? e.costMicros : micros;
}

/** The part of an estimate that is its tokens: a token bill is allocated by it (never by the searches the same key made). */
const tokenMicros = (e: Estimate): bigint => e.costMicros - webSearchMicros(e);

export function settleAnthropicDay(day: BilledDay, estimates: readonly Estimate[], tracked: (keyId: string | null) => boolean): DaySettlement {
  const s: DaySettlement = { date: day.date, targets: new Map(), billedMicros: 0n, lines: [] };
  const lines = new Lines();
  // Bill groups (picos summed, rounded once per group).
  const groups = new Map<string, { projectId: string | null; kind: 'tokens' | 'web_search' | 'other'; model: string; tier: string; long: boolean; line: string; picos: bigint }>();
  for (const r of day.rows) {
    const kind = r.costType === 'tokens' && r.model ? 'tokens' : r.costType === 'web_search' ? 'web_search' : 'other';
    const model = kind === 'tokens' ? r.model!.toLowerCase() : '';
    const tier = kind === 'tokens' ? billedTier(r.tier ?? 'standard') : '';
    const long = kind === 'tokens' && r.longContext === true;
    const line = kind === 'tokens' ? anthropicLine(model, tier, long) : r.line;
    const id = `${r.projectId ?? ''}|${kind}|${kind === 'other' ? r.line : `${model}|${tier}|${long}`}`;
    const g = groups.get(id);
    if (g) g.picos += r.picos;
    else groups.set(id, { projectId: r.projectId, kind, model, tier, long, line, picos: r.picos });
  }
  const inWorkspace = (e: Estimate, projectId: string | null) => (e.projectId ?? null) === projectId;
  /** The usage a token bill group bills: same workspace, model, billed tier and context window (never Priority Tier). */
  const billedBy = (e: Estimate, g: { projectId: string | null; model: string; tier: string; long: boolean }) =>
    inWorkspace(e, g.projectId) && e.tier !== PRIORITY_TIER && e.model === g.model && billedTier(e.tier) === g.tier && (e.longContext === true) === g.long;
  for (const g of groups.values()) {
    const micros = roundPicos(g.picos);
    s.billedMicros += micros;
    let basis: Estimate[] = [];
    let weights: bigint[] = [];
    if (g.kind === 'tokens') {
      basis = estimates.filter((e) => billedBy(e, g));
      // Each line by its own estimate: the tokens' (a key's web searches are billed, and allocated, on their own line).
      weights = basis.map(tokenMicros);
      if (!weights.some((w) => w > 0n)) weights = basis.map((e) => e.tokens);
    } else if (g.kind === 'web_search') {
      basis = estimates.filter((e) => inWorkspace(e, g.projectId) && (e.webSearchRequests ?? 0) > 0);
      weights = basis.map((e) => BigInt(e.webSearchRequests ?? 0));
    }
    const shares = basis.length > 0 ? largestRemainder(micros, weights) : undefined;
    if (!shares) {
      // No key explains it: the workspace's share of the unattributed key.
      addTarget(s, null, g.kind === 'tokens' ? g.model : g.line, micros);
      lines.add(g.line, 0n, micros, 'not_estimated');
      continue;
    }
    // The line's estimate: the tokens of its model, or the web searches (which the model's estimate also holds, and
    // the bill has on a line of its own).
    const estimated = basis.reduce(
      (a, e) => a + (!tracked(e.keyId) ? 0n : g.kind === 'tokens' ? tokenMicros(e) : g.kind === 'web_search' ? webSearchMicros(e) : 0n),
      0n,
    );
    let untracked = 0n;
    basis.forEach((e, i) => {
      const share = shares[i]!;
      // A key's share goes to its model's row (web searches too: the row whose estimate holds them, and whose
      // web_search price line counts them); only what no key explains is a row of its own.
      if (tracked(e.keyId)) addTarget(s, e.keyId, e.model, share);
      else untracked += share;
    });
    const reason = untracked !== 0n ? 'plan_key_limit' : g.kind === 'tokens' && estimated === 0n ? 'unpriced' : g.kind === 'web_search' && estimated === 0n ? 'not_estimated' : null;
    lines.add(g.line, estimated, micros, reason);
  }
  // Estimates without a bill behind them go to 0, except Priority Tier, which keeps its estimate on its own line.
  const billedEstimate = new Set<Estimate>();
  for (const g of groups.values()) {
    if (g.kind !== 'tokens') continue;
    for (const e of estimates) if (billedBy(e, g)) billedEstimate.add(e);
  }
  for (const e of estimates) {
    if (!tracked(e.keyId)) continue;
    if (e.tier === PRIORITY_TIER) {
      // The row keeps the estimate: a target equal to it.
      addTarget(s, e.keyId, e.model, e.costMicros);
      lines.add(anthropicLine(e.model, PRIORITY_TIER, e.longContext), e.costMicros, null, 'priority_tier');
      continue;
    }
    if (billedEstimate.has(e)) continue;
    addTarget(s, e.keyId, e.model, 0n);
    lines.add(anthropicLine(e.model, billedTier(e.tier), e.longContext), e.costMicros, 0n);
  }
  s.lines = lines.list();
  return s;
}

/**
 * OpenRouter: its usage already comes in the dollars it charges (each key's activity, settled as it comes), so no
 * key's row is corrected; the day's bill is the account's whole activity per model. What the keys' activity does not
 * explain (a key deleted before the connection was made, usage outside any listed key) is the connection's usage
 * without a key, per model: so a settled day shows exactly what OpenRouter charged (docs/features/connections.md).
 */
export function settleReportedDay(day: BilledDay, estimates: readonly Estimate[], tracked: (keyId: string | null) => boolean): DaySettlement {
  const s: DaySettlement = { date: day.date, targets: new Map(), billedMicros: 0n, lines: [] };
  const lines = new Lines();
  const billed = new Map<string, bigint>();
  for (const r of day.rows) {
    const model = (r.model ?? r.line).toLowerCase();
    billed.set(model, (billed.get(model) ?? 0n) + r.picos);
  }
  const keysOf = new Map<string, { all: bigint; shown: bigint; untracked: bigint }>();
  for (const e of estimates) {
    if (e.keyId === null) continue;
    const m = keysOf.get(e.model) ?? { all: 0n, shown: 0n, untracked: 0n };
    keysOf.set(e.model, m);
    m.all += e.costMicros;
    if (tracked(e.keyId)) m.shown += e.costMicros;
    else m.untracked += e.costMicros;
  }
  for (const model of new Set([...billed.keys(), ...keysOf.keys()])) {
    const micros = roundPicos(billed.get(model) ?? 0n);
    const keys = keysOf.get(model) ?? { all: 0n, shown: 0n, untracked: 0n };
    s.billedMicros += micros;
    const rest = micros - keys.all;
    if (rest !== 0n && tracked(null)) addTarget(s, null, model, rest);
    lines.add(model, keys.shown, micros, keys.untracked !== 0n ? 'plan_key_limit' : rest > 0n ? 'not_estimated' : null);
  }
  s.lines = lines.list();
  return s;
}

/** The bill of a day for a provider. */
export function settleDay(provider: 'openai' | 'anthropic' | 'openrouter', day: BilledDay, estimates: readonly Estimate[], tracked: (keyId: string | null) => boolean): DaySettlement {
  if (provider === 'openrouter') return settleReportedDay(day, estimates, tracked);
  return provider === 'openai' ? settleOpenAiDay(day, estimates, tracked) : settleAnthropicDay(day, estimates, tracked);
}

/**
 * Whether a past day settles: a bucket with rows does; an empty bucket only when the day has no usage either
 * (settled at 0) — otherwise the day is "not billed yet". Today and later never settle (their bucket is partial).
 */
export function settles(day: BilledDay | undefined, estimates: readonly Estimate[], today: string, date: string): boolean {
  if (date >= today) return false;
  if (day && day.rows.length > 0) return true;
  return estimates.every((e) => e.costMicros === 0n && e.tokens === 0n);
}

/**
 * The corrections a settled day needs: per (key, row), what the aggregates must add beside the estimate they hold
 * (`stored`: the snapshot's cells) so the row equals its bill — `target − estimate(key, row)`. Anthropic's priority
 * rows have target = estimate (nothing added). A stored estimate whose row has no target keeps correction 0.
 */
export function corrections(s: DaySettlement, stored: readonly Estimate[]): Map<string, { keyId: string | null; row: string; micros: bigint }> {
  const estimateOf = new Map<string, bigint>();
  for (const e of stored) estimateOf.set(keyOf(e.keyId, e.model), (estimateOf.get(keyOf(e.keyId, e.model)) ?? 0n) + e.costMicros);
  const out = new Map<string, { keyId: string | null; row: string; micros: bigint }>();
  for (const [id, t] of s.targets) out.set(id, { keyId: t.keyId, row: t.row, micros: t.micros - (estimateOf.get(id) ?? 0n) });
  return out;
}
