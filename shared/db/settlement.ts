/**
 * Settlement's items in the import snapshot partition (`IMPORT#<a>#<provider>`): the correction applied last per
 * (day, key, row) (`SETTLE#…`, conditioned on its version like the usage cells), and the reconciliation day's
 * settled state — billed figure, `settled`, lines — SET only where it changed. The corrections' money moves the
 * aggregates through the chunk writer's families (shared/db/usage-writes.ts), in the same transaction.
 */
import { queryAll, tableName, transactWrite, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { readInt, readNumber } from '#shared/db/numbers.ts';
import type { Built } from '#shared/db/usage-writes.ts';
import { versionedCellUpdate } from '#shared/db/import-snapshot.ts';
import { UNATTRIBUTED } from '#shared/usage/names.ts';

/** Why a reconciliation line differs from its estimate (the dashboard says it in words). */
export type LineReason = 'priority_tier' | 'not_estimated' | 'unpriced' | 'plan_key_limit';

export interface Line {
  line: string;
  estimatedMicros: bigint;
  /** null: not in the provider's bill (Anthropic Priority Tier). */
  billedMicros: bigint | null;
  reason: LineReason | null;
}

export interface SettleCell {
  date: string;
  keyId: string | null;
  row: string;
  appliedMicros: bigint;
  version: number;
}

export interface SettleChange {
  date: string;
  keyId: string | null;
  row: string;
  /** The correction the aggregates should hold now. */
  appliedMicros: bigint;
  delta: bigint;
  previous?: SettleCell;
}

export const settleCellId = (c: Pick<SettleCell, 'date' | 'keyId' | 'row'>) => `${c.date}#${c.keyId ?? UNATTRIBUTED}#${c.row}`;

/** The corrections of the days `from`…`to` (ONE Query, every page, consistent). */
export async function loadSettleCells(accountId: string, provider: string, from: string, to: string): Promise<SettleCell[]> {
  const q = queries.settleCells(accountId, provider, from, to);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
    ConsistentRead: true,
  });
  return items.map((item) => ({
    date: item.date as string,
    keyId: item.keyId === UNATTRIBUTED ? null : (item.keyId as string),
    row: item.row as string,
    appliedMicros: readInt(item.appliedMicros),
    version: readNumber(item.v),
  }));
}

/** Family: the correction cells a transaction replaces, versioned like the usage cells (shared/db/import-snapshot.ts). */
export function settleCellItems(accountId: string, provider: string, changes: readonly SettleChange[]): Built {
  const out: Built = { actions: [], meaning: [] };
  for (const c of changes) {
    const keyId = c.keyId ?? UNATTRIBUTED;
    out.actions.push(versionedCellUpdate(keys.settleCell(accountId, provider, c.date, keyId, c.row), { date: c.date, keyId, row: c.row, appliedMicros: c.appliedMicros }, c.previous?.version));
    out.meaning.push({ cell: `settle#${settleCellId(c)}` });
  }
  return out;
}

/** A reconciliation day as stored: computed (what the aggregates hold), estimated, and the settled bill. */
export interface ReconDetail {
  date: string;
  computedMicros: bigint;
  /** The token estimate (absent on days written before estimates were kept apart: the computed figure). */
  estimatedMicros: bigint;
  billedMicros: bigint | null;
  settled: boolean;
  lines: Line[];
}

interface StoredLine {
  line: string;
  estimatedMicros: bigint;
  billedMicros: bigint | null;
  reason: string | null;
}

const toLine = (l: StoredLine): Line => ({
  line: l.line,
  estimatedMicros: readInt(l.estimatedMicros),
  billedMicros: l.billedMicros === null || l.billedMicros === undefined ? null : readInt(l.billedMicros),
  reason: (l.reason ?? null) as Line['reason'],
});

export function toReconDetail(item: Item): ReconDetail {
  const computed = readInt(item.computedMicros);
  return {
    date: item.date as string,
    computedMicros: computed,
    estimatedMicros: item.estimatedMicros === undefined ? computed : readInt(item.estimatedMicros),
    billedMicros: item.billedMicros === undefined || item.billedMicros === null ? null : readInt(item.billedMicros),
    settled: item.settled === true,
    lines: Array.isArray(item.lines) ? (item.lines as StoredLine[]).map(toLine) : [],
  };
}

/** A provider's reconciliation days `from`…`to` with their settlement (ONE Query). */
export async function loadReconDetails(accountId: string, provider: string, from: string, to: string, consistent = false): Promise<ReconDetail[]> {
  const q = queries.importDays(accountId, provider, from, to);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
    ConsistentRead: consistent,
  });
  return items.map(toReconDetail);
}

export interface ReconSettlement {
  date: string;
  billedMicros: bigint | null;
  settled: boolean;
  lines: Line[];
}

/** A canonical form of a day's settlement: equal forms need no write. */
export const settlementForm = (d: Pick<ReconSettlement, 'billedMicros' | 'settled' | 'lines'>) =>
  JSON.stringify([d.billedMicros?.toString() ?? null, d.settled, d.lines.map((l) => [l.line, l.estimatedMicros.toString(), l.billedMicros?.toString() ?? null, l.reason])]);

/**
 * SETs the settlement of the days whose settlement changed (billed, settled, lines): one transaction per 100 days.
 * The computed and estimated figures the sync's transactions ADD to the same items are left alone.
 */
export async function setReconSettlements(accountId: string, provider: string, days: readonly ReconSettlement[]): Promise<void> {
  for (let i = 0; i < days.length; i += 100) {
    await transactWrite(
      days.slice(i, i + 100).map((d) => ({
        Update: {
          TableName: tableName(),
          Key: keys.importDay(accountId, provider, d.date),
          UpdateExpression: 'SET #date = :date, billedMicros = :billed, settled = :settled, #lines = :lines',
          ExpressionAttributeNames: { '#date': 'date', '#lines': 'lines' },
          ExpressionAttributeValues: {
            ':date': d.date,
            ':billed': d.billedMicros,
            ':settled': d.settled,
            ':lines': d.lines.map((l) => ({ line: l.line, estimatedMicros: l.estimatedMicros, billedMicros: l.billedMicros, reason: l.reason })),
          },
        },
      })),
    );
  }
}

/** Which of a provider's days `from`…`to` are settled (ONE Query; the key breakdown and GET /spend flags). */
export async function settledDays(accountId: string, provider: string, from: string, to: string): Promise<Set<string>> {
  const q = queries.importDays(accountId, provider, from, to);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': q.pk, ':from': q.skFrom, ':to': q.skTo },
    ProjectionExpression: '#date, settled',
    ExpressionAttributeNames: { '#date': 'date' },
  });
  return new Set(items.filter((i) => i.settled === true).map((i) => i.date as string));
}

