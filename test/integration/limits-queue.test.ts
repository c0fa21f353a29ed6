/**
 * The AWS path of a sync's limits phase (docs/features/budgets-and-enforcement.md "When a stop happens"), end to end
 * against the stand-ins: the provider's worker handler (functions/connections/worker-anthropic.ts) on a real
 * SQS-shaped event syncs, and queues the limits pass instead of pulling levers (it bundles none); the pass goes
 * through a local FIFO limits queue (local/limits-queue.ts) to the limits function's handler
 * (functions/connections/limits-anthropic.ts), which opens the admin key and stops the key at the stand-in. A paused
 * connection's release goes the same way.
 *
 * The local stack's own worker runs the limits phase in its process right after each sync (shared/sync/all.ts): so
 * that it does not sync this connection meanwhile, its next sync is moved a day out and the pause is written to the
 * table directly (a PATCH would queue a sync on the stack's worker).
 */
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as anthropicWorker } from '#functions/connections/worker-anthropic.ts';
import { getConnection, setConnectionFields } from '#shared/db/connections.ts';
import type { LimitsMessage } from '#shared/sync/limits-queue.ts';
import { startLimitsQueue, type LimitsQueue } from '#local/limits-queue.ts';
import type { QueueHandler } from '#local/queue.ts';
import { api, registerUser, setPlan, type RegisteredUser } from './harness.ts';
import { connectStandIn, keyHash, pointAtStandIns, type StandInOrg } from './standins.ts';

let restore: () => void;
const orgs: StandInOrg[] = [];
let limits: LimitsQueue;
/** What the limits function received (each record's body and message group), in order. */
const received: { body: LimitsMessage; group: string | undefined }[] = [];

beforeAll(async () => {
  restore = await pointAtStandIns();
  const { handler } = await import('#functions/connections/limits-anthropic.ts');
  const recording: QueueHandler = (event, context) => {
    for (const r of event.Records) received.push({ body: JSON.parse(r.body) as LimitsMessage, group: r.attributes.MessageGroupId });
    return handler(event, context);
  };
  limits = startLimitsQueue('anthropic', { handler: recording, baseDelayMs: 50 });
});
afterAll(async () => {
  await limits?.stop();
  await Promise.all(orgs.map((o) => o.remove()));
  restore?.();
});

const sqsEvent = (body: unknown): SQSEvent => ({
  Records: [
    {
      messageId: crypto.randomUUID(),
      receiptHandle: 'r',
      body: JSON.stringify(body),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: 'LOCAL', ApproximateFirstReceiveTimestamp: String(Date.now()) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:burnrate-local-sync-anthropic',
      awsRegion: 'us-east-1',
    },
  ],
});
const context = { functionName: 'burnrate-local-ConnectorWorker-anthropic', awsRequestId: 'test', getRemainingTimeInMillis: () => 300_000 } as Context;

const keyStatus = async (org: StandInOrg, id: string): Promise<string> => ((await org.state()).keys as any[]).find((k) => k.id === id)!.status;
const monthSpend = async (user: RegisteredUser, hash: string): Promise<number> => (await api(`/keys/${hash}`, { token: user.token })).body.spend.monthToDate;
const budget = async (user: RegisteredUser, id: string) => ((await api('/budgets', { token: user.token })).body.items as any[]).find((b) => b.id === id);

/** Keeps the stack's own dispatcher away from the connection (its worker would run the limits phase in its process). */
async function notDueForADay(accountId: string, connectionId: string): Promise<void> {
  const conn = (await getConnection(accountId, connectionId, true))!;
  await setConnectionFields(conn, { nextSyncAt: new Date(Date.now() + 86_400_000).toISOString() });
}

describe('Anthropic: the worker queues the limits pass, the limits function pulls the lever', () => {
  it('a stop budget crossed by a sync: the key is still active when the worker is done, inactive once the pass ran; a pause releases it the same way', async () => {
    const user = await registerUser();
    await setPlan(user.accountId, 'GROWTH');
    const now = new Date();
    const { org, connectionId } = await connectStandIn(user, 'anthropic', { now, orgs, historyDays: 2, settled: true });
    const keyId = ((await org.state()).keys as any[]).find((k) => k.name === 'prod-api')!.id as string;
    const hash = keyHash('anthropic', keyId);
    // A stop budget the key's spend is well under (no act waits: nothing queues a sync on the stack's worker).
    const spend = await monthSpend(user, hash);
    const limit = Math.ceil(spend * 1.5) + 1;
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'prod cap', monthlyLimit: limit, alertThreshold: 80, action: 'stop', scope: 'KEY', keyHash: hash } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await notDueForADay(user.accountId, connectionId);
    // The key spends past the limit at the provider: only the next sync sees it.
    await org.control('/usage', { apiKeyId: keyId, model: 'claude-sonnet-4-5-20250929', add: { output: Math.ceil(((limit - spend + 2) / 15) * 1e6) } });
    expect(await keyStatus(org, keyId)).toBe('active');

    await anthropicWorker(sqsEvent({ accountId: user.accountId, connectionId, provider: 'anthropic' }), context);
    // The worker synced the spend and pulled nothing itself: the pass is on the queue.
    expect(await monthSpend(user, hash)).toBeGreaterThan(limit);
    expect(await keyStatus(org, keyId)).toBe('active');
    await limits.drain();
    expect(await keyStatus(org, keyId)).toBe('inactive');
    expect(await budget(user, created.body.id)).toMatchObject({ enforcement: { status: 'stopped' } });
    const pass = received.filter((r) => r.body.connectionId === connectionId);
    expect(pass).toHaveLength(1);
    expect(pass[0]!.group).toBe(connectionId);
    expect(pass[0]!.body).toMatchObject({ accountId: user.accountId, connectionId, provider: 'anthropic', at: expect.any(String) });
    // The key that grew is named, for the spend-anomaly rules.
    expect(pass[0]!.body.grown.map(([h]) => h)).toContain(hash);

    // Paused (as PATCH would, without the sync it queues on the stack's worker): the next sync message imports
    // nothing and queues the release; the limits function gives the key back.
    await setConnectionFields((await getConnection(user.accountId, connectionId, true))!, { status: 'paused' });
    await anthropicWorker(sqsEvent({ accountId: user.accountId, connectionId, provider: 'anthropic' }), context);
    expect(await keyStatus(org, keyId)).toBe('inactive');
    await limits.drain();
    expect(await keyStatus(org, keyId)).toBe('active');
    const passes = received.filter((r) => r.body.connectionId === connectionId);
    expect(passes).toHaveLength(2);
    expect(passes[1]!.body.grown).toEqual([]);
    expect(limits.deadLetters).toEqual([]);
    // Both acts the limits function took, newest first: the release because the connection changed, the stop.
    const acts = (await api(`/enforcement-actions?budgetId=${created.body.id}`, { token: user.token })).body.items as any[];
    expect(acts.map((a) => [a.kind, a.reason, a.result])).toEqual([
      ['key_reactivated', 'connection_changed', 'ok'],
      ['key_deactivated', 'limit_reached', 'ok'],
    ]);
  });
});
