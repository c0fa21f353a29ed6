/**
 * The account's record of enforcement (GET /enforcement-actions, the dashboard's Actions screen): every act, newest
 * first, named as people know its holder and its target; filtered by provider and result in ONE Query a page, each
 * page filled up to `limit` or carrying a cursor; bad filters are problem+json 400s; a cursor belongs to its filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putActions } from '#shared/db/enforcement.ts';
import type { EnforcementAction } from '#shared/db/enforcement-model.ts';
import { newId } from '#shared/ids.ts';
import { api, pointAtStack, registerUser, type RegisteredUser } from './harness.ts';

let restore: () => void;
beforeAll(() => {
  restore = pointAtStack();
});
afterAll(() => restore?.());

const PROVIDERS = ['openai', 'anthropic', 'openrouter'] as const;

/** `n` acts of the account, oldest first (ids are monotonic: the list is newest first), as the enforcement writer records them. */
async function seed(accountId: string, n: number, shape: (i: number) => Partial<EnforcementAction>): Promise<EnforcementAction[]> {
  const acts: EnforcementAction[] = Array.from({ length: n }, (_, i) => ({
    id: newId('action'),
    budgetId: 'bud_01JD3K4Z7Q8W9E2R5T6Y7V8X9A',
    holder: { kind: 'budget' as const, id: 'bud_01JD3K4Z7Q8W9E2R5T6Y7V8X9A' },
    kind: 'key_deactivated' as const,
    provider: 'anthropic',
    keyHash: null,
    projectId: null,
    reason: 'limit_reached' as const,
    actor: 'burnrate',
    result: 'ok' as const,
    detail: `act ${i}`,
    at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
    ...shape(i),
  }));
  for (let i = 0; i < acts.length; i += 100) await putActions(accountId, acts.slice(i, i + 100));
  return acts;
}

/** Every page of `path` (its `limit` per page), following the cursor; the pages' sizes too. */
async function allPages(user: RegisteredUser, path: string): Promise<{ items: any[]; sizes: number[] }> {
  const items: any[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await api(`${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.body.items);
    sizes.push(res.body.items.length);
    cursor = res.body.nextCursor;
  } while (cursor && sizes.length < 100);
  return { items, sizes };
}

describe('GET /enforcement-actions', () => {
  it('a real act names its holder and its target; the release names the person who released', async () => {
    const user = await registerUser();
    const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'app' } })).body.key as string;
    const hash = 'b'.repeat(63) + '2';
    const event = (id: string, costUsd: number) => ({ requestId: id, keyHash: hash, keyHint: 'Zq42', provider: 'openai', model: 'gpt-4o', inputTokens: 10, outputTokens: 10, costUsd });
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event('a', 0.5)] } })).status).toBe(200);
    expect((await api(`/keys/${hash}`, { method: 'PATCH', token: user.token, body: { label: 'Checkout bot' } })).status).toBe(200);
    const created = await api('/budgets', { method: 'POST', token: user.token, body: { name: 'Bot cap', monthlyLimit: 1, alertThreshold: 80, scope: 'KEY', keyHash: hash, action: 'stop' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event('b', 1)] } })).status).toBe(200);
    const stopped = await api('/enforcement-actions', { token: user.token });
    expect(stopped.body.items).toMatchObject([{ kind: 'reporter_blocked', holder: { kind: 'budget', id: created.body.id }, holderName: 'Bot cap', targetName: 'Checkout bot', keyHash: hash, provider: 'openai', reason: 'limit_reached', actor: 'burnrate', result: 'ok' }]);
    // The key says who stops it, at once.
    expect((await api(`/keys/${hash}`, { token: user.token })).body.stoppedBy).toMatchObject([{ kind: 'budget', id: created.body.id, name: 'Bot cap', lever: 'reporter' }]);

    expect((await api(`/budgets/${created.body.id}/release`, { method: 'POST', token: user.token })).status).toBe(200);
    const after = await api('/enforcement-actions?provider=openai&result=ok', { token: user.token });
    expect(after.body.items.map((a: any) => [a.kind, a.reason, a.actor, a.holderName])).toEqual([
      ['reporter_unblocked', 'released', user.userId, 'Bot cap'],
      ['reporter_blocked', 'limit_reached', 'burnrate', 'Bot cap'],
    ]);
    expect((await api('/enforcement-actions?provider=anthropic', { token: user.token })).body).toEqual({ items: [], nextCursor: null });
    expect((await api('/enforcement-actions?result=failed', { token: user.token })).body).toEqual({ items: [], nextCursor: null });
  });

  it('provider and result filter every page, newest first, each page full up to the last; a provider as people write it is that provider', async () => {
    const user = await registerUser();
    const acts = await seed(user.accountId, 130, (i) => ({ provider: PROVIDERS[i % 3]!, result: i % 7 === 0 ? 'failed' : 'ok' }));
    const newestFirst = [...acts].reverse();
    const ids = (xs: { id: string }[]) => xs.map((a) => a.id);

    const anthropic = await allPages(user, '/enforcement-actions?provider=anthropic&limit=10');
    expect(ids(anthropic.items)).toEqual(ids(newestFirst.filter((a) => a.provider === 'anthropic')));
    // 43 matches: four full pages and the rest (a page is filled up to its limit).
    expect(anthropic.sizes).toEqual([10, 10, 10, 10, 3]);

    const failed = await allPages(user, '/enforcement-actions?result=failed&limit=7');
    expect(ids(failed.items)).toEqual(ids(newestFirst.filter((a) => a.result === 'failed')));
    expect(failed.items.every((a) => a.result === 'failed')).toBe(true);

    const both = await allPages(user, '/enforcement-actions?provider=OpenAI&result=ok&limit=100');
    expect(ids(both.items)).toEqual(ids(newestFirst.filter((a) => a.provider === 'openai' && a.result === 'ok')));
    expect(both.sizes).toEqual([both.items.length]);

    // Unfiltered: every act, in pages of the limit.
    const all = await allPages(user, '/enforcement-actions?limit=50');
    expect(ids(all.items)).toEqual(ids(newestFirst));
    expect(all.sizes).toEqual([50, 50, 30]);
  });

  it('matches past what one request reads: a page with fewer than the limit still says more follows', async () => {
    const user = await registerUser();
    // The one failed act is the oldest, behind 520 that went through (one request reads 500).
    const [failedAct] = await seed(user.accountId, 1, () => ({ result: 'failed', provider: 'openrouter' }));
    await seed(user.accountId, 520, () => ({ provider: 'openrouter' }));
    const first = await api('/enforcement-actions?result=failed', { token: user.token });
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual([]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const next = await api(`/enforcement-actions?result=failed&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: user.token });
    expect(next.body.items.map((a: any) => a.id)).toEqual([failedAct!.id]);
    expect(next.body.nextCursor).toBeNull();
  });

  it('bad filters are 400 problems; a cursor works only with the filters it came with', async () => {
    const user = await registerUser();
    await seed(user.accountId, 4, (i) => ({ provider: PROVIDERS[i % 2]! }));
    for (const query of ['provider=', 'provider=%2Fetc%2Fpasswd', `provider=${'x'.repeat(40)}`, 'result=maybe', 'result=', 'kind=key_disabled', 'limit=0']) {
      const res = await api(`/enforcement-actions?${query}`, { token: user.token });
      expect(res.status, query).toBe(400);
      expect(res.headers.get('content-type'), query).toMatch(/^application\/problem\+json/);
      expect(res.body.errors?.length, query).toBeGreaterThan(0);
    }
    const page = await api('/enforcement-actions?provider=openai&limit=1', { token: user.token });
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const cursor = encodeURIComponent(page.body.nextCursor);
    expect((await api(`/enforcement-actions?provider=openai&limit=1&cursor=${cursor}`, { token: user.token })).status).toBe(200);
    expect((await api(`/enforcement-actions?provider=anthropic&cursor=${cursor}`, { token: user.token })).status).toBe(400);
    expect((await api(`/enforcement-actions?cursor=${cursor}`, { token: user.token })).status).toBe(400);
    expect((await api(`/enforcement-actions?provider=openai&result=ok&cursor=${cursor}`, { token: user.token })).status).toBe(400);
    // Another account's acts are not in this account's record.
    const other = await registerUser();
    expect((await api('/enforcement-actions?provider=openai', { token: other.token })).body).toEqual({ items: [], nextCursor: null });
  });
});
