/**
 * Coverage answers for the filters asked (docs/features/spend-and-exports.md): a connection's notes (`sync_failing`,
 * `estimated`, `sync_pending`, plan limits) apply to a filtered answer only when that connection's keys can be in it.
 * An account with an OpenAI connection (synced) and an Anthropic connection whose admin key was revoked (failing).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, pointConnectorsAtStack, registerUser, setPlan, syncHere, type RegisteredUser } from './harness.ts';
import { keyHash, newStandInOrg, type StandInOrg } from './standins.ts';

const sent = new Map<string, number>();
let restore: () => void;
let openai: StandInOrg;
let anthropic: StandInOrg;
let user: RegisteredUser;
let openaiKeyHash: string;
const eventKeyHash = createHash('sha256').update('sk-events-only-key').digest('hex');

type Note = { code: string; provider?: string };
const notesOf = async (query: string) => {
  const res = await api(`/spend${query}`, { token: user.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.coverage as { complete: boolean; notes: Note[] };
};
const providersOf = (notes: Note[]) => [...new Set(notes.filter((n) => n.provider).map((n) => `${n.code}:${n.provider}`))].sort();

beforeAll(async () => {
  restore = await pointConnectorsAtStack(sent);
  // Two days of seeded usage each: the notes asked about are this month's and today's, and the first syncs (the stack's
  // own, which this file waits for) import 2 days, not 2 months.
  openai = await newStandInOrg('openai', { historyDays: 2 });
  anthropic = await newStandInOrg('anthropic', { historyDays: 2 });
  user = await registerUser();
  await setPlan(user.accountId, 'SCALE');
  const connect = async (provider: string, adminKey: string) => {
    const res = await api('/connections', { method: 'POST', token: user.token, body: { provider, adminKey } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const openaiId = await connect('openai', openai.adminKey);
  const anthropicId = await connect('anthropic', anthropic.adminKey);
  expect((await syncHere(user.accountId, openaiId)).status).toBe('done');
  await anthropic.control('/admin-key', { revoked: true });
  expect((await syncHere(user.accountId, anthropicId)).status).toBe('refused');
  const state = await openai.state();
  openaiKeyHash = keyHash('openai', state.keys[0].id);
  // A key that reports events (no connection).
  const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: { name: 'events' } })).body.key;
  const event = { requestId: 'cov-1', keyHash: eventKeyHash, provider: 'mistral', model: 'mistral-large-latest', inputTokens: 10, outputTokens: 5 };
  expect((await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events: [event] } })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await openai?.remove();
  await anthropic?.remove();
  restore?.();
});

describe('coverage answers for the filters asked', () => {
  it('the whole account: the failing Anthropic connection and both providers\' estimates are noted', async () => {
    const all = await notesOf('');
    expect(all.complete).toBe(false);
    expect(providersOf(all.notes)).toEqual(expect.arrayContaining(['estimated:openai', 'sync_failing:anthropic']));
  });

  it('keyHash of an OpenAI key: only the OpenAI connection\'s notes (no sync_failing: anthropic)', async () => {
    const one = await notesOf(`?keyHash=${openaiKeyHash}`);
    expect(providersOf(one.notes).every((n) => n.endsWith(':openai'))).toBe(true);
    expect(providersOf(one.notes)).toContain('estimated:openai');
    expect(one.complete).toBe(true);
  });

  it('keyHash of a key of events, projectId of no project: no connection\'s note at all', async () => {
    for (const query of [`?keyHash=${eventKeyHash}`, '?projectId=proj_none_such', `?keyHash=${'0'.repeat(64)}`]) {
      const c = await notesOf(query);
      expect(providersOf(c.notes), query).toEqual([]);
      expect(c.complete, query).toBe(true);
    }
  });

  it('the plug-in for other filters: one that keeps keys (a tag) passes `keeps`, one of events only (a customer) `eventsOnly`', async () => {
    const { coverageOf, coverageScope } = await import('#shared/spend/coverage.ts');
    const today = new Date().toISOString().slice(0, 10);
    const notes = async (filters: Parameters<typeof coverageScope>[1]) =>
      providersOf((await coverageOf(user.accountId, { from: today, to: today, unpricedRequests: 0n, ...(await coverageScope(user.accountId, filters)) })).notes);
    // Keys an OpenAI-only tag would keep: the OpenAI connection's notes only.
    expect(await notes({ keeps: (k) => k.provider === 'openai' })).toEqual(['estimated:openai']);
    // Keys of Anthropic: its failing connection's notes.
    expect(await notes({ keeps: (k) => k.provider === 'anthropic' && k.source === 'connection' })).toContain('sync_failing:anthropic');
    // A filter that keeps no key, and one of events only: no connection's note.
    expect(await notes({ keeps: () => false })).toEqual([]);
    expect(await notes({ eventsOnly: true })).toEqual([]);
  });

  it('projectId of an OpenAI project: the OpenAI connection only; provider=openai: the same', async () => {
    const state = await openai.state();
    const project = await notesOf(`?projectId=${state.projects[0].id}`);
    expect(providersOf(project.notes)).toEqual(['estimated:openai']);
    const provider = await notesOf('?provider=openai');
    expect(providersOf(provider.notes)).toEqual(['estimated:openai']);
    const other = await notesOf('?provider=anthropic');
    expect(providersOf(other.notes)).toContain('sync_failing:anthropic');
  });
});
