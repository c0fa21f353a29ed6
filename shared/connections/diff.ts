/**
 * The snapshot diff (pure): what a sync read for a window of days against what it imported last, cell by cell.
 * A cell whose counts are unchanged yields nothing (it costs no write); a grown cell its growth; a cell revised down
 * (or gone from a complete read of its day) a negative difference. Costs are at the prices in force now: the
 * difference of the new and the old counts, each priced now — so a cell priced at one price all along ends exactly
 * at its price — except a cell that drops to zero, which gives back exactly the cost it holds.
 */
import { COUNT_FIELDS, LONG_CONTEXT_WINDOW, zeroCounts, type Counts, type UsageCell } from '#shared/connections/model.ts';
import { UNATTRIBUTED } from '#shared/usage/names.ts';
import type { StoredCell, CellChange } from '#shared/db/import-snapshot.ts';

export type { StoredCell, CellChange };

export { UNATTRIBUTED };

/** A cell's identity in the snapshot; a long-context cell's ends in its window (standard cells keep the identity they had before windows were read). */
export const cellId = (c: Pick<UsageCell, 'date' | 'keyId' | 'model' | 'tier' | 'longContext'>) =>
  `${c.date}#${c.keyId ?? UNATTRIBUTED}#${c.model}#${c.tier}${c.longContext ? `#${LONG_CONTEXT_WINDOW}` : ''}`;

const sameCounts = (a: Counts, b: Counts) => COUNT_FIELDS.every((f) => a[f] === b[f]);

/** No counts, and (a cell whose provider reports its cost) no cost either. */
const isZero = (c: Counts & { reportedCostMicros?: bigint }) => COUNT_FIELDS.every((f) => c[f] === 0) && !c.reportedCostMicros;

/** The same counts and, where the provider reports the cost, the same cost. */
const unchanged = (previous: StoredCell, cell: UsageCell) =>
  sameCounts(previous, cell) && (cell.reportedCostMicros === undefined || cell.reportedCostMicros === previous.costMicros);

/** Prices one cell's counts now: µ$ and whether the model is priced. */
export type CellPricer = (cell: UsageCell) => { costMicros: bigint; priced: boolean };

/**
 * The changes that bring the snapshot `stored` (every stored cell of the days read) to what was `read` (a complete
 * read of those days).
 */
export function diffCells(read: readonly UsageCell[], stored: ReadonlyMap<string, StoredCell>, price: CellPricer): CellChange[] {
  const changes: CellChange[] = [];
  const seen = new Set<string>();
  const change = (cell: UsageCell, previous: StoredCell | undefined) => {
    const before = previous ?? zeroCounts();
    const delta = Object.fromEntries(COUNT_FIELDS.map((f) => [f, cell[f] - before[f]])) as unknown as Counts;
    const now = price(cell);
    let costDelta: bigint;
    if (isZero(cell)) costDelta = -(previous?.costMicros ?? 0n);
    // A cost the provider reports (OpenRouter) replaces the one held, whatever the counts.
    else if (cell.reportedCostMicros !== undefined) costDelta = cell.reportedCostMicros - (previous?.costMicros ?? 0n);
    else if (!previous) costDelta = now.costMicros;
    else costDelta = now.costMicros - price({ ...cell, ...pickCounts(previous) }).costMicros;
    changes.push({ id: cellId(cell), cell, previous, delta, costDelta, costMicros: (previous?.costMicros ?? 0n) + costDelta, priced: now.priced });
  };
  for (const cell of read) {
    const id = cellId(cell);
    seen.add(id);
    const previous = stored.get(id);
    if (previous && unchanged(previous, cell)) continue;
    if (!previous && isZero(cell)) continue;
    change(cell, previous);
  }
  for (const [id, previous] of stored) {
    if (seen.has(id) || (isZero(previous) && previous.costMicros === 0n)) continue;
    change({ date: previous.date, keyId: previous.keyId, model: previous.model, tier: previous.tier, ...(previous.longContext ? { longContext: true as const } : {}), projectId: previous.projectId, ...zeroCounts() }, previous);
  }
  return changes;
}

const pickCounts = (c: Counts): Counts => Object.fromEntries(COUNT_FIELDS.map((f) => [f, c[f]])) as unknown as Counts;
