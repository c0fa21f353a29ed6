/** The `connection_error` alert: a provider refused the admin key; once per connection and UTC day, e-mail to admins. */
import { logger } from '#shared/http/logger.ts';
import { alreadyFired, fireAlert, firedPk } from '#shared/db/alerts.ts';
import { makeAlert } from '#shared/alerting/evaluate.ts';
import { publishAlerts } from '#shared/alerting/queue.ts';
import { isoDate } from '#shared/time/periods.ts';
import type { Connection } from '#shared/db/connections.ts';
import { providerName } from '#shared/providers/names.ts';

export { providerName };

/** Title and message (pure): which provider, what it said, what to do. The admin key never appears (only its last 4). */
export function connectionErrorText(conn: Pick<Connection, 'provider' | 'keyHint'>, detail: string): { title: string; message: string } {
  return {
    title: `${providerName(conn.provider)} connection failing: the admin key was refused`,
    message: `Burnrate could not read usage from ${providerName(conn.provider)} with the admin key ending in ${conn.keyHint}. ${detail} Until then no new spend of this organization is imported.`,
  };
}

export async function raiseConnectionErrorAlert(conn: Connection, detail: string, now = new Date()): Promise<void> {
  try {
    const day = isoDate(now);
    const fired = { source: conn.id, level: 'error', period: day };
    if ((await alreadyFired(conn.accountId, [fired])).has(firedPk(conn.accountId, fired))) return;
    const alert = {
      ...makeAlert(conn.accountId, now, {
        type: 'connection_error',
        ...connectionErrorText(conn, detail),
        period: day,
        thresholdMicros: null,
        observedMicros: null,
        channels: ['email'],
      }),
      connectionId: conn.id,
      adminsOnly: true as const,
    };
    if (await fireAlert(alert, fired)) await publishAlerts([{ accountId: conn.accountId, alertId: alert.id }]);
  } catch (error) {
    logger.error('connection error alert failed', error as Error);
  }
}
