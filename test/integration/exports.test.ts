/**
 * Asynchronous spend exports (docs/features/spend-and-exports.md) against the running stack: POST /spend/exports
 * queues a job, the local export worker builds the gzip CSV under the data folder, GET /spend/exports/{id} gives a
 * one-time download link. The file, decompressed, is byte for byte the synchronous GET /spend/export of the range.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localExportFiles } from '#local/export-files.ts';
import { setLocalExportFiles, type ExportFileStore } from '#shared/spend/export-files.ts';
import { setLocalExportQueue, type ExportMessage } from '#shared/spend/export-queue.ts';
import { EXPORT_LEASE_MS, runSpendExport, startSpendExport } from '#shared/spend/exports.ts';
import { api, pointAtStack, registerUser, type RegisteredUser } from './harness.ts';

const DAY = 86_400_000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const now = Date.now();
const today = isoDay(now);

let owner: RegisteredUser;
let other: RegisteredUser;

/** Events on 6 days over 3 keys and 3 models; one key labelled with a comma, quotes and a formula. */
async function seed(user: RegisteredUser): Promise<void> {
  const ingestKey = (await api('/ingest-keys', { method: 'POST', token: user.token, body: {} })).body.key as string;
  const keyHashes = Array.from({ length: 3 }, (_, i) => sha256(`export-key-${i}-${randomUUID()}`));
  const events = [0, 1, 3, 8, 15, 29].flatMap((d, day) =>
    keyHashes.flatMap((keyHash, k) =>
      ['gpt-4o-mini', 'claude-sonnet-4', 'odd,"model"'].slice(0, 1 + ((k + day) % 3)).map((model, m) => ({
        requestId: randomUUID(),
        keyHash,
        provider: model === 'claude-sonnet-4' ? 'anthropic' : 'openai',
        model,
        inputTokens: 1000 + day * 31 + k * 7 + m,
        outputTokens: 200 + day * 13 + k,
        ...(model.startsWith('odd') ? { costUsd: Number(`0.${String(day * 7919 + k).padStart(6, '0')}`) } : {}),
        timestamp: new Date(Math.min(now - d * DAY, now - 60_000)).toISOString(),
      })),
    ),
  );
  const res = await api('/ingest', { method: 'POST', headers: { 'x-api-key': ingestKey }, body: { events } });
  expect(res.body.accepted, JSON.stringify(res.body)).toBe(events.length);
  await api(`/keys/${keyHashes[0]}`, { method: 'PATCH', token: user.token, body: { label: '=SUM(A1), "prod"' } });
}

/** The export's status once it is no longer running (the worker runs off the request path: polled). */
async function settled(user: RegisteredUser, id: string) {
  for (let attempt = 0; attempt < 300; attempt++) {
    const res = await api(`/spend/exports/${id}`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.status !== 'running') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`export ${id} still running`);
}

async function start(user: RegisteredUser, body: unknown) {
  const res = await api('/spend/exports', { method: 'POST', token: user.token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

beforeAll(async () => {
  [owner, other] = await Promise.all([registerUser(), registerUser()]);
  await seed(owner);
}, 60_000);

describe('POST /spend/exports → the worker → GET /spend/exports/{id}', () => {
  it('the decompressed file is byte for byte GET /spend/export of the same range; rows and bytes say so', async () => {
    const from = isoDay(now - 20 * DAY);
    const created = await start(owner, { from, to: today });
    expect(created).toEqual({ id: expect.stringMatching(/^exp_[0-9A-Z]{26}$/), from, to: today, status: 'running', rows: 0, bytes: 0, url: null, expiresAt: null, createdAt: expect.any(String), format: 'csv' });

    const ready = await settled(owner, created.id);
    expect(ready).toMatchObject({ id: created.id, from, to: today, status: 'ready', url: expect.any(String), expiresAt: expect.any(String) });
    // The link lives 1 hour (give or take the request's own time).
    expect(Math.abs(Date.parse(ready.expiresAt) - (Date.now() + 3600_000))).toBeLessThan(60_000);

    const sync = await api(`/spend/export?from=${from}&to=${today}`, { token: owner.token });
    expect(sync.status).toBe(200);
    const download = await fetch(ready.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="burnrate-spend-${from}-to-${today}.csv.gz"`);
    const gz = Buffer.from(await download.arrayBuffer());
    expect(gz.length).toBe(ready.bytes);
    const csv = gunzipSync(gz).toString('utf8');
    expect(csv).toBe(sync.body);
    expect(ready.rows).toBe(csv.split('\r\n').length - 2);
    expect(ready.rows).toBeGreaterThan(10);
    // The quoted, formula-guarded label and model made it through unchanged.
    expect(csv).toContain(`"'=SUM(A1), ""prod"""`);
    expect(csv).toContain('"odd,""model"""');
  });

  it('the download link works once; the status then hands out a new one', async () => {
    const { id } = await start(owner, { from: isoDay(now - 2 * DAY), to: today });
    const ready = await settled(owner, id);
    expect((await fetch(ready.url)).status).toBe(200);
    const again = await fetch(ready.url);
    expect(again.status).toBe(410);
    expect(again.headers.get('content-type')).toBe('application/problem+json');
    const fresh = await api(`/spend/exports/${id}`, { token: owner.token });
    expect(fresh.body.url).not.toBe(ready.url);
    const second = await fetch(fresh.body.url);
    expect(second.status).toBe(200);
    expect(gunzipSync(Buffer.from(await second.arrayBuffer())).toString('utf8').startsWith('date,key_hash,')).toBe(true);
    expect((await fetch(`${fresh.body.url.slice(0, -4)}AAAA`)).status).toBe(404);
    // Two downloads of one link at once: exactly one gets the file.
    const link = (await api(`/spend/exports/${id}`, { token: owner.token })).body.url as string;
    const statuses = await Promise.all([1, 2, 3].map(async () => (await fetch(link)).status));
    expect(statuses.sort()).toEqual([200, 410, 410]);
  });

  it('366 days are accepted (and exported); 367 days are refused with errors[].path', async () => {
    const from = isoDay(now - 365 * DAY);
    const year = await start(owner, { from, to: today });
    const ready = await settled(owner, year.id);
    expect(ready.status).toBe('ready');
    const sync30 = await api(`/spend/export?from=${isoDay(now - 35 * DAY)}&to=${today}`, { token: owner.token });
    // Everything ever ingested lies in the last 35 days: the year's rows are those.
    expect(ready.rows).toBe(sync30.body.split('\r\n').length - 2);

    const refused = await api('/spend/exports', { method: 'POST', token: owner.token, body: { from: isoDay(now - 366 * DAY), to: today } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.body.errors).toEqual([{ path: 'from', message: 'The range spans 367 days.' }]);
  });

  it('the date rules of GET /spend: a bad date, from after to, unknown fields → 400 naming the field; no body → this month', async () => {
    const bad = await api('/spend/exports', { method: 'POST', token: owner.token, body: { from: '2026-02-30' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(['from']);
    const reversed = await api('/spend/exports', { method: 'POST', token: owner.token, body: { from: today, to: isoDay(now - DAY) } });
    expect(reversed.body.errors.map((e: { path: string }) => e.path)).toEqual(['from']);
    const extra = await api('/spend/exports', { method: 'POST', token: owner.token, body: { from: today, accountId: 'br_x' } });
    expect(extra.status).toBe(400);
    const month = await api('/spend/exports', { method: 'POST', token: owner.token });
    expect(month.status).toBe(202);
    expect(month.body).toMatchObject({ from: `${today.slice(0, 7)}-01`, to: today });
    await settled(owner, month.body.id);
  });

  it("another account's export id is a 404, as is an id that is no export id", async () => {
    const { id } = await start(owner, { from: today, to: today });
    const res = await api(`/spend/exports/${id}`, { token: other.token });
    expect(res.status).toBe(404);
    expect(res.body.type).toContain('/problems/not-found');
    expect((await api('/spend/exports/exp_nope', { token: owner.token })).status).toBe(404);
    expect((await api(`/spend/exports/${id.replace('exp_', 'alt_')}`, { token: owner.token })).status).toBe(404);
    await settled(owner, id);
  });
});

describe('at most 2 running exports per account', () => {
  let undo: () => void;
  let dir: string;
  const held: ExportMessage[] = [];

  beforeAll(async () => {
    // This process starts two exports of its own and holds their queue messages: their slots stay taken for as long
    // as the test wants, whatever the stack's worker does.
    undo = pointAtStack();
    dir = await mkdtemp(join(tmpdir(), 'burnrate-exports-'));
    setLocalExportQueue((message) => held.push(message));
    setLocalExportFiles(localExportFiles(dir, 'http://127.0.0.1:9'));
  });
  afterAll(async () => {
    setLocalExportQueue(undefined);
    setLocalExportFiles(undefined);
    undo?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('a 3rd start while 2 run is a 429 with Retry-After; once one is ready the next start is accepted', async () => {
    const user = await registerUser();
    await Promise.all([1, 2].map(() => startSpendExport(user.accountId, user.userId, {})));
    expect(held).toHaveLength(2);

    const third = await api('/spend/exports', { method: 'POST', token: user.token, body: {} });
    expect(third.status).toBe(429);
    expect(third.headers.get('content-type')).toBe('application/problem+json');
    expect(third.body.type).toContain('/problems/too-many-exports');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);

    expect(await runSpendExport(held[0]!)).toBe('ready');
    expect(await runSpendExport(held[0]!)).toBe('skipped');
    const fourth = await start(user, {});
    await settled(user, fourth.id);
    expect(await runSpendExport(held[1]!)).toBe('ready');
  });

  it('a worker that died: past the lease the export reads failed and its slot is free; a late job settles nothing', async () => {
    const user = await registerUser();
    held.length = 0;
    const longAgo = new Date(Date.now() - EXPORT_LEASE_MS - 60_000);
    const stale = await Promise.all([1, 2].map(() => startSpendExport(user.accountId, user.userId, {}, longAgo)));
    const status = await api(`/spend/exports/${stale[0]!.id}`, { token: user.token });
    expect(status.body).toMatchObject({ status: 'failed', url: null });
    // Both slots' leases are over: a start is accepted.
    const fresh = await start(user, {});
    await settled(user, fresh.id);
    expect(await runSpendExport(held[0]!)).toBe('failed');
    expect(await runSpendExport(held[0]!)).toBe('skipped');
  });

  it('a file that cannot be written: the export is failed and its slot freed', async () => {
    const user = await registerUser();
    held.length = 0;
    const broken: ExportFileStore = {
      put: async (_key, body) => {
        body.resume();
        throw new Error('disk full');
      },
      link: async () => 'unused',
    };
    setLocalExportFiles(broken);
    try {
      await Promise.all([1, 2].map(() => startSpendExport(user.accountId, user.userId, {})));
      expect(await runSpendExport(held[0]!)).toBe('failed');
    } finally {
      setLocalExportFiles(localExportFiles(dir, 'http://127.0.0.1:9'));
    }
    expect((await api(`/spend/exports/${held[0]!.exportId}`, { token: user.token })).body).toMatchObject({ status: 'failed', rows: 0, bytes: 0, url: null });
    const next = await start(user, {});
    await settled(user, next.id);
    expect(await runSpendExport(held[1]!)).toBe('ready');
  });

  it('20 concurrent starts on a fresh account: exactly 2 are accepted', async () => {
    const user = await registerUser();
    held.length = 0;
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => startSpendExport(user.accountId, user.userId, {})));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    for (const o of outcomes) if (o.status === 'rejected') expect(o.reason).toMatchObject({ status: 429, slug: 'too-many-exports' });
    expect(held).toHaveLength(2);
    for (const message of held) expect(await runSpendExport(message)).toBe('ready');
  });
});

describe('the synchronous export', () => {
  it('export-too-large names the asynchronous export', async () => {
    const res = await api(`/spend/export?from=${isoDay(now - 100 * DAY)}&to=${today}`, { token: owner.token });
    expect(res.status).toBe(400);
    expect(res.body.type).toContain('/problems/export-too-large');
    expect(res.body.detail).toContain('POST /spend/exports');
  });
});
