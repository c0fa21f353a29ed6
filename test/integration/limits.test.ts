import { describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { currentPeriod } from '#shared/billing/plans.ts';
import { api, dynamo, registerUser, stack, type RegisteredUser } from './harness.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newKeyHash = () => sha256(`sk-test-${randomUUID()}`);
const event = (keyHash: string) => ({ requestId: randomUUID(), keyHash, provider: 'openai', model: 'gpt-4o', inputTokens: 1, outputTokens: 1, costUsd: 0.01 });

async function tenant() {
  const user = await registerUser();
  const res = await api('/ingest-keys', { method: 'POST', token: user.token, body: {} });
  return { user, ingestKey: res.body.key as string };
}
const ingest = (t: { ingestKey: string }, events: unknown[]) =>
  api('/ingest', { method: 'POST', headers: { 'x-api-key': t.ingestKey }, body: { events } });

async function useRequests(user: RegisteredUser, n: number) {
  const period = currentPeriod({ plan: 'FREE' }, new Date());
  await dynamo().send(
    new PutCommand({ TableName: stack().tableName, Item: { ...keys.usagePeriod(user.accountId, period.start), periodStart: period.start, trackedRequests: n } }),
  );
}

describe('plan limits at ingestion', () => {
  it('30 concurrent batches against a FREE account with 9,990 requests used accept exactly 10 more events', async () => {
    const t = await tenant();
    const hash = newKeyHash();
    const first = event(hash);
    expect((await ingest(t, [first])).body.accepted).toBe(1); // the key exists: only the request limit is in play
    await useRequests(t.user, 9_990);
    const results = await Promise.all(Array.from({ length: 30 }, () => ingest(t, [event(hash), event(hash), event(hash)])));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const accepted = results.reduce((n, r) => n + r.body.accepted, 0);
    const refused = results.flatMap((r) => r.body.rejected);
    expect(accepted).toBe(10);
    expect(refused).toHaveLength(80);
    expect(new Set(refused.map((r: { code: string }) => r.code))).toEqual(new Set(['plan_limit_reached']));
    const status = await api('/billing/status', { token: t.user.token });
    expect(status.body.usage).toMatchObject({ trackedRequests: 10_000, limit: 10_000 });
    const alerts = await api('/alerts', { token: t.user.token });
    expect(alerts.body.items.map((a: { type: string }) => a.type)).toEqual(['plan_limit']);
    // a replay of a counted batch at the limit is reported as duplicates, not as refused
    const full = await ingest(t, [first, event(hash)]);
    expect(full.body).toMatchObject({ accepted: 0, duplicates: 1, rejected: [{ index: 1, code: 'plan_limit_reached' }] });
    expect((await api('/alerts', { token: t.user.token })).body.items).toHaveLength(1);
  });

  it('accepts exactly the new keys the plan allows, even when batches race', async () => {
    const t = await tenant();
    const existing = [newKeyHash(), newKeyHash(), newKeyHash()];
    expect((await ingest(t, existing.map(event))).body.accepted).toBe(3);
    const results = await Promise.all(Array.from({ length: 10 }, () => ingest(t, [event(newKeyHash())])));
    expect(results.reduce((n, r) => n + r.body.accepted, 0)).toBe(2);
    const codes = results.flatMap((r) => r.body.rejected.map((x: { code: string }) => x.code));
    expect(codes).toEqual(Array(8).fill('key_limit_reached'));
    expect((await api('/keys', { token: t.user.token })).body.items).toHaveLength(5);
    expect((await api('/billing/status', { token: t.user.token })).body.usage).toMatchObject({ keys: 5, keyLimit: 5 });
    // known keys keep working at the key limit
    expect((await ingest(t, [event(existing[0]!)])).body.accepted).toBe(1);
  });
});
