/** GET /alerts (filters, counts), PATCH /alerts/{id}/acknowledge and POST /alerts/acknowledge (bulk). */
import { NotFound, ValidationError } from '#shared/http/errors.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { DEFAULT_LIMIT } from '#shared/http/pagination.ts';
import { isId } from '#shared/ids.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { acknowledgeAlert, acknowledgeAlerts, alertCounts, listAlerts, triggeredAlertIds } from '#shared/db/alerts.ts';
import { alertView } from '#shared/alerting/model.ts';
import type { AuthContext } from '#shared/http/auth-context.ts';
import type { AcknowledgeBody, ListAlertsQuery } from '#shared/alerts/schemas.ts';

/** The cursor carries DynamoDB's LastEvaluatedKey; it must point into this account's own alerts. */
function startKey(accountId: string, query: ListAlertsQuery, list: string): Record<string, unknown> | undefined {
  if (!query.cursor) return undefined;
  const key = decodeCursor(query.cursor, accountId, list) as Record<string, unknown> | null;
  const { skPrefix } = queries.alerts(accountId);
  const id = typeof key?.sk === 'string' && key.sk.startsWith(skPrefix) ? key.sk.slice(skPrefix.length) : '';
  const expected = keys.alert(accountId, id);
  const index = query.status ? keys.alertIndex(accountId, id, query.status) : undefined;
  const valid =
    isId('alert', id) &&
    key?.pk === expected.pk &&
    key.sk === expected.sk &&
    (!index || (key.gsi1pk === index.gsi1pk && key.gsi1sk === index.gsi1sk));
  if (!valid) throw new ValidationError('The cursor is not valid for this list.', [{ path: 'query.cursor', message: 'Invalid cursor.' }]);
  return key!;
}

export async function listAlertsView(accountId: string, query: ListAlertsQuery) {
  const list = `alerts:${query.status ?? 'all'}`;
  const filter = { ...(query.type ? { type: query.type } : {}), ...(query.keyHash ? { keyHash: query.keyHash } : {}) };
  const [page, counts] = await Promise.all([
    listAlerts(accountId, query.status, query.limit ?? DEFAULT_LIMIT, startKey(accountId, query, list), filter),
    alertCounts(accountId),
  ]);
  return {
    items: page.items.map(alertView),
    nextCursor: page.lastKey ? encodeCursor(accountId, list, page.lastKey) : null,
    counts,
  };
}

/** POST /alerts/acknowledge: the alerts named (of this account; others are not counted), or every triggered one that matches. */
export async function acknowledgeMany(auth: AuthContext, body: AcknowledgeBody, now = new Date()) {
  const ids =
    'ids' in body
      ? body.ids
      : await triggeredAlertIds(auth.accountId, { ...(body.type ? { type: body.type } : {}), ...(body.keyHash ? { keyHash: body.keyHash } : {}) });
  return { acknowledged: await acknowledgeAlerts(auth.accountId, ids, auth.userId, now) };
}

export async function acknowledge(auth: AuthContext, alertId: string, now = new Date()) {
  const alert = isId('alert', alertId) ? await acknowledgeAlert(auth.accountId, alertId, auth.userId, now) : undefined;
  if (!alert) throw new NotFound('No such alert.');
  return alertView(alert);
}
