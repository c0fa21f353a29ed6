/** GET /enforcement-actions (the record) and GET /ingest/blocks (the reporter's block list). */
import { getBudget } from '#shared/db/budgets.ts';
import { listActions, listStates } from '#shared/db/enforcement.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { NotFound, ValidationError } from '#shared/http/errors.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { isId } from '#shared/ids.ts';
import { ListActionsQuery } from '#shared/enforcement/schemas.ts';

/** The request schema lives in schemas.ts (the OpenAPI document takes it from there); its name stays available here. */
export { ListActionsQuery } from '#shared/enforcement/schemas.ts';

/** How often a reporter reads the block list again (≤ 30 s). */
export const BLOCKS_REFRESH_SECONDS = 15;

export async function listEnforcementActions(accountId: string, query: ListActionsQuery) {
  if (query.budgetId !== undefined && (!isId('budget', query.budgetId) || !(await getBudget(accountId, query.budgetId)))) {
    // Another account's budget, or none: 404 (an act of a deleted budget is still listed in the account's record).
    throw new NotFound('The budget does not exist.');
  }
  // A cursor belongs to one list: the holder's or the account's, with its filters (another filter's cursor is refused).
  const filter = { ...(query.provider ? { provider: query.provider } : {}), ...(query.result ? { result: query.result } : {}) };
  const list = `actions:${query.budgetId ?? 'all'}${query.provider ? `:provider=${query.provider}` : ''}${query.result ? `:result=${query.result}` : ''}`;
  let startKey: Record<string, unknown> | undefined;
  if (query.cursor) {
    const key = decodeCursor(query.cursor, accountId, list) as Record<string, unknown> | null;
    if (!key || typeof key.pk !== 'string' || key.pk !== `ACTIONS#${accountId}`) {
      throw new ValidationError('The cursor is not valid for this list.', [{ path: 'query.cursor', message: 'Invalid cursor.' }]);
    }
    startKey = key;
  }
  const page = await listActions(accountId, query.budgetId, query.limit ?? DEFAULT_LIMIT, startKey, filter);
  return { items: page.items, nextCursor: page.lastKey ? encodeCursor(accountId, list, page.lastKey) : null };
}

/**
 * The keys the reporter refuses now, with the name of a holder (a budget's, or an anomaly rule's). One Query (the
 * lever states, eventually consistent: half the read units, a second late at most): holds carry their names.
 */
export async function ingestBlocks(accountId: string) {
  const states = (await listStates(accountId, false)).filter((s) => s.target.kind === 'reporter' && s.target.keyHash && s.holds.length > 0 && (s.status === 'stopped' || s.status === 'acting'));
  const blocked = states.map((s) => {
    const h = s.holds.find((x) => x.kind === 'budget') ?? s.holds[0]!;
    return { keyHash: s.target.keyHash!, budgetId: h.kind === 'budget' ? h.id : null, budgetName: h.name, holder: { kind: h.kind, id: h.id }, since: h.since };
  });
  return { blocked, refreshAfterSeconds: BLOCKS_REFRESH_SECONDS };
}
