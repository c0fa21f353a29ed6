/**
 * Per-account caps hold exactly under concurrent creates (20 ingest keys, 100 budgets, 100 rules): each create
 * takes a slot of a counter in its own transaction, each delete frees one (shared/db/caps.ts).
 */
import { describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/db/keys.ts';
import { newId } from '#shared/ids.ts';
import { api, dynamo, registerUser, stack, type ApiResponse } from './harness.ts';

const budgetBody = { monthlyLimit: 10, alertThreshold: 80, scope: 'ACCOUNT' };
const ruleBody = { type: 'cost_threshold', name: 'Daily', config: { threshold: 5, period: 'daily' }, channels: ['email'], isActive: true };

async function parallel(n: number, token: string, path: string, body: unknown): Promise<ApiResponse[]> {
  return Promise.all(Array.from({ length: n }, () => api(path, { method: 'POST', token, body })));
}

function expectExactly(results: ApiResponse[], created: number, type: string) {
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(created);
  expect(statuses.filter((s) => s === 409)).toHaveLength(results.length - created);
  for (const r of results.filter((r) => r.status === 409)) expect(r.body).toMatchObject({ type, status: 409 });
}

async function count(token: string, path: string): Promise<number> {
  const res = await api(path, { token });
  expect(res.status).toBe(200);
  return res.body.items.length;
}

describe('caps under concurrent creates', () => {
  it('40 parallel ingest-key creates store exactly 20; a delete frees exactly one slot', async () => {
    const user = await registerUser();
    const results = await parallel(40, user.token, '/ingest-keys', {});
    expectExactly(results, 20, '/problems/ingest-key-limit');
    expect(await count(user.token, '/ingest-keys')).toBe(20);

    const victim = results.find((r) => r.status === 201)!.body.id;
    expect((await api(`/ingest-keys/${victim}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    expectExactly(await parallel(5, user.token, '/ingest-keys', {}), 1, '/problems/ingest-key-limit');
    expect(await count(user.token, '/ingest-keys')).toBe(20);
  });

  it('130 parallel budget creates store exactly 100; a delete frees exactly one slot', async () => {
    const user = await registerUser();
    const results = await parallel(130, user.token, '/budgets', budgetBody);
    expectExactly(results, 100, '/problems/budget-limit');
    expect(await count(user.token, '/budgets')).toBe(100);

    const victim = results.find((r) => r.status === 201)!.body.id;
    expect((await api(`/budgets/${victim}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    // deleting it again frees nothing
    expect((await api(`/budgets/${victim}`, { method: 'DELETE', token: user.token })).status).toBe(404);
    expectExactly(await parallel(5, user.token, '/budgets', budgetBody), 1, '/problems/budget-limit');
    expect(await count(user.token, '/budgets')).toBe(100);
  });

  it('130 parallel rule creates store exactly 100; a delete frees exactly one slot', async () => {
    const user = await registerUser();
    const results = await parallel(130, user.token, '/alert-rules', ruleBody);
    expectExactly(results, 100, '/problems/rule-limit');
    expect(await count(user.token, '/alert-rules')).toBe(100);

    const victim = results.find((r) => r.status === 201)!.body.id;
    expect((await api(`/alert-rules/${victim}`, { method: 'DELETE', token: user.token })).status).toBe(204);
    expectExactly(await parallel(5, user.token, '/alert-rules', ruleBody), 1, '/problems/rule-limit');
    expect(await count(user.token, '/alert-rules')).toBe(100);
  });

  it('an account from before the counters (15 budgets, no counter) counts them first: 100 parallel creates add exactly 85', async () => {
    const user = await registerUser();
    const at = new Date().toISOString();
    await Promise.all(
      Array.from({ length: 15 }, () => {
        const id = newId('budget');
        return dynamo().send(
          new PutCommand({
            TableName: stack().tableName,
            Item: {
              ...keys.budget(user.accountId, id),
              entity: 'Budget',
              type: 'Budget',
              id,
              name: null,
              monthlyLimitMicros: 10_000_000,
              alertThreshold: 80,
              scope: 'ACCOUNT',
              keyHash: null,
              createdAt: at,
              updatedAt: at,
            },
          }),
        );
      }),
    );
    expectExactly(await parallel(100, user.token, '/budgets', budgetBody), 85, '/problems/budget-limit');
    expect(await count(user.token, '/budgets')).toBe(100);
  });
});
