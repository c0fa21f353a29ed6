/**
 * One slice's settlement (docs/architecture.md: settlement is a third producer of the same aggregates): for each day
 * of the slice the provider has billed, the bill per (key, row) (shared/connections/settle.ts), compared with the
 * corrections applied last; only the differences are written (through the sync's chunk writer), and the
 * reconciliation day's billed figure, `settled` and lines are SET only where they changed. A re-sync that finds the
 * same bill and the same usage writes nothing.
 */
import { daysBetween } from '#shared/time/periods.ts';
import type { StoredCell } from '#shared/connections/diff.ts';
import type { BilledDay, UsageCell } from '#shared/connections/model.ts';
import { corrections, settleDay, settles, type Estimate } from '#shared/connections/settle.ts';
import {
  loadReconDetails,
  loadSettleCells,
  setReconSettlements,
  settleCellId,
  settlementForm,
  type ReconSettlement,
  type SettleChange,
} from '#shared/db/settlement.ts';

export type { SettleChange } from '#shared/db/settlement.ts';

export interface SettleContext {
  accountId: string;
  provider: 'openai' | 'anthropic' | 'openrouter';
  today: string;
  /** The estimate of a usage cell now (the sync's pricing). */
  price: (cell: UsageCell) => { costMicros: bigint };
  /** Whether the key's billed money may be shown (tracked, or admitted now); `date` names the day asking. */
  tracked: (keyId: string | null, date: string) => boolean;
}

const tokensOf = (c: Pick<UsageCell, 'inputTokens' | 'outputTokens'>) => BigInt(c.inputTokens) + BigInt(c.outputTokens);
const webSearchOf = (c: object): number | undefined => {
  const n = (c as { webSearchRequests?: unknown }).webSearchRequests;
  return typeof n === 'number' ? n : undefined;
};

function byDate<T extends { date: string }>(items: Iterable<T>): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.date);
    if (list) list.push(item);
    else out.set(item.date, [item]);
  }
  return out;
}

/**
 * Settles the days `from`…`to`: `read` is the slice's usage as the provider reports it now (every key), `stored`
 * the snapshot after this sync's usage writes (tracked keys), `billed` the cost endpoint's days. `write` takes the
 * corrections' differences (it throws the sync's conflict when a cell changed meanwhile: the caller retries).
 */
export async function settleSlice(
  ctx: SettleContext,
  from: string,
  to: string,
  read: readonly UsageCell[],
  billed: readonly BilledDay[],
  stored: readonly StoredCell[],
  write: (changes: SettleChange[]) => Promise<void>,
): Promise<{ changes: number; days: number; unsettled: string[] }> {
  const basis = byDate<Estimate>(
    read.map((c) => {
      const ws = webSearchOf(c);
      return { date: c.date, keyId: c.keyId, projectId: c.projectId, model: c.model, tier: c.tier, ...(c.longContext ? { longContext: true as const } : {}), costMicros: ctx.price(c).costMicros, tokens: tokensOf(c), ...(ws !== undefined ? { webSearchRequests: ws } : {}) };
    }),
  );
  const held = byDate<Estimate>(
    stored.map((c) => ({ date: c.date, keyId: c.keyId, projectId: c.projectId, model: c.model, tier: c.tier, ...(c.longContext ? { longContext: true as const } : {}), costMicros: c.costMicros, tokens: tokensOf(c) })),
  );
  const billedByDay = new Map(billed.map((d) => [d.date, d]));
  const [applied, recon] = await Promise.all([loadSettleCells(ctx.accountId, ctx.provider, from, to), loadReconDetails(ctx.accountId, ctx.provider, from, to, true)]);
  const appliedByDay = byDate(applied);
  const reconByDay = new Map(recon.map((d) => [d.date, d]));
  const changes: SettleChange[] = [];
  const days: ReconSettlement[] = [];
  const unsettled: string[] = [];
  for (const date of daysBetween(from, to)) {
    const estimates = basis.get(date) ?? [];
    const day = billedByDay.get(date);
    const before = reconByDay.get(date);
    let desired: ReconSettlement;
    if (!settles(day, estimates, ctx.today, date)) {
      // Not billed yet: the estimate stands (corrections of an earlier bill, if any, stay until the bill returns).
      desired = { date, billedMicros: null, settled: false, lines: [] };
      unsettled.push(date);
    } else {
      const s = settleDay(ctx.provider, day ?? { date, rows: [] }, estimates, (keyId) => ctx.tracked(keyId, date));
      const wanted = corrections(s, held.get(date) ?? []);
      const seen = new Set<string>();
      for (const cell of appliedByDay.get(date) ?? []) {
        const id = settleCellId(cell);
        seen.add(id);
        const target = wanted.get(`${cell.keyId ?? ''}|${cell.row}`)?.micros ?? 0n;
        if (target !== cell.appliedMicros) changes.push({ date, keyId: cell.keyId, row: cell.row, appliedMicros: target, delta: target - cell.appliedMicros, previous: cell });
      }
      for (const w of wanted.values()) {
        if (seen.has(settleCellId({ date, keyId: w.keyId, row: w.row })) || w.micros === 0n) continue;
        changes.push({ date, keyId: w.keyId, row: w.row, appliedMicros: w.micros, delta: w.micros });
      }
      desired = { date, billedMicros: s.billedMicros, settled: true, lines: s.lines };
    }
    const current = before ?? { billedMicros: null, settled: false, lines: [] };
    if (settlementForm(desired) !== settlementForm(current)) days.push(desired);
  }
  if (changes.length > 0) await write(changes);
  await setReconSettlements(ctx.accountId, ctx.provider, days);
  return { changes: changes.length, days: days.length, unsettled };
}
