/**
 * The plan's key limit under two first syncs at once (docs/features/connections.md): the room is claimed in the same
 * conditional write as the keys, so a sync whose room went stale (another connection's sync took some) fits its keys
 * into the room as it is now, instead of tracking none. Free plan: 5 keys; an OpenAI organization with 8 keys with
 * usage and an Anthropic one with 1; the OpenAI sync reads its room (5), then waits at its first provider request
 * while the Anthropic sync takes 1 slot; then it goes on.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, pointConnectorsAtStack, registerUser, setPlan, stack, syncHere } from './harness.ts';
import { newStandInOrg, type StandInOrg } from './standins.ts';

const sent = new Map<string, number>();
let restore: () => void;
const orgs: StandInOrg[] = [];

beforeAll(async () => {
  restore = await pointConnectorsAtStack(sent);
});
afterAll(async () => {
  for (const o of orgs) await o.remove();
  restore?.();
});

describe('the key limit under two first syncs at once', () => {
  it('Free plan, 1 of 5 slots taken by the other sync meanwhile: the OpenAI sync tracks 4 of its 8 keys (not 0), the rest listed untracked', async () => {
    const { createConnection } = await import('#shared/connections/service.ts');
    const { db } = await import('#shared/db/client.ts');
    const { keys } = await import('#shared/db/keys.ts');
    const openai = await newStandInOrg('openai', { big: { keys: 8, models: 1, days: 2 } });
    const anthropic = await newStandInOrg('anthropic', { big: { keys: 1, models: 1, days: 2 } });
    orgs.push(openai, anthropic);
    const user = await registerUser();
    await setPlan(user.accountId, 'FREE');
    // Connected here (no queued sync: this process has no sync queue) and kept from the stack's dispatcher: the two
    // first syncs are this test's.
    const ids: string[] = [];
    for (const [provider, org] of [['openai', openai], ['anthropic', anthropic]] as const) {
      const c = await createConnection(user.accountId, { provider, adminKey: org.adminKey });
      await db().send(new UpdateCommand({ TableName: stack().tableName, Key: keys.connection(user.accountId, c.id), UpdateExpression: 'SET nextSyncAt = :later', ExpressionAttributeValues: { ':later': '9999-01-01T00:00:00.000Z' } }));
      ids.push(c.id);
    }
    const [openaiId, anthropicId] = ids as [string, string];

    let reachedProvider!: () => void;
    const atProvider = new Promise<void>((resolve) => (reachedProvider = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The OpenAI sync's provider requests wait for the gate: it has read the plan's room by then.
    const gated: typeof fetch = async (input, init) => {
      reachedProvider();
      await gate;
      return fetch(input, init);
    };
    const openaiSync = syncHere(user.accountId, openaiId, { http: { fetch: gated } });
    await atProvider;
    expect((await syncHere(user.accountId, anthropicId)).status).toBe('done');
    release();
    const result = await openaiSync;
    expect(result.status).toBe('done');

    const listed = (await api('/keys?limit=100', { token: user.token })).body.items as { provider: string; tracked: boolean; keyHash: string }[];
    const tracked = (provider: string) => listed.filter((k) => k.provider === provider && k.tracked).length;
    const untracked = (provider: string) => listed.filter((k) => k.provider === provider && !k.tracked).length;
    expect({ openai: tracked('openai'), anthropic: tracked('anthropic') }).toEqual({ openai: 4, anthropic: 1 });
    expect(untracked('openai')).toBe(4);
    const conn = (await api(`/connections/${openaiId}`, { token: user.token })).body;
    expect(conn.statusDetail).toContain('key limit (5 keys)');
    // The plan's counter: every slot taken, none twice.
    const account = (await db().send(new GetCommand({ TableName: stack().tableName, Key: keys.account(user.accountId), ConsistentRead: true }))).Item!;
    expect(account.keyCount).toBe(5);
  });
});
