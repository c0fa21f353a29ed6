/** The sweeper: alerts whose queue hand-off was lost are found on gsi2 and queued again, until delivered. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '#shared/ids.ts';
import { fireAlert } from '#shared/db/alerts.ts';
import { deliverAlert } from '#shared/notify/deliver.ts';
import { setLocalAlertSink, type AlertMessage } from '#shared/alerting/queue.ts';
import { SWEEP_GRACE_MS, sweepUndelivered } from '#shared/notify/sweep.ts';
import type { Alert } from '#shared/alerting/model.ts';
import { pointAtStack, registerUser } from './harness.ts';

let restore: () => void;
const published: AlertMessage[] = [];
let outbox: string;
beforeAll(async () => {
  outbox = await mkdtemp(join(tmpdir(), 'burnrate-sweep-'));
  restore = pointAtStack({ OUTBOX_DIR: outbox, ALERT_EMAIL_FROM: 'alerts@burnrate.test' });
  setLocalAlertSink((messages) => published.push(...messages));
});
afterAll(async () => {
  setLocalAlertSink(undefined);
  restore();
  await rm(outbox, { recursive: true, force: true });
});

function alert(accountId: string, triggeredAt: Date): Alert {
  return {
    id: newId('alert'),
    accountId,
    type: 'plan_limit',
    status: 'triggered',
    ruleId: null,
    budgetId: null,
    keyHash: null,
    keyHashes: [],
    title: 'A lost alert',
    message: 'Its queue message never made it.',
    period: triggeredAt.toISOString().slice(0, 10),
    thresholdMicros: null,
    observedMicros: null,
    deliveries: [{ channel: 'email', status: 'pending', attempts: 0 }],
    triggeredAt: triggeredAt.toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
  };
}

describe('sweepUndelivered', () => {
  it('re-queues only undelivered alerts past the grace period, and forgets them once delivered', async () => {
    const user = await registerUser();
    const now = new Date();
    const lost = alert(user.accountId, new Date(now.getTime() - SWEEP_GRACE_MS - 60_000));
    const fresh = alert(user.accountId, new Date(now.getTime() - 60_000));
    expect(await fireAlert(lost, { source: 'test', level: 'lost', period: lost.id })).toBe(true);
    expect(await fireAlert(fresh, { source: 'test', level: 'fresh', period: fresh.id })).toBe(true);

    await sweepUndelivered(now);
    const ids = published.map((m) => m.alertId);
    expect(ids).toContain(lost.id);
    expect(ids).not.toContain(fresh.id);

    expect(await deliverAlert(user.accountId, lost.id, now)).toEqual({ done: true });
    published.length = 0;
    await sweepUndelivered(now);
    expect(published.map((m) => m.alertId)).not.toContain(lost.id);
  });
});
