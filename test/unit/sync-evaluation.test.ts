/**
 * A sync's alert evaluation as a queue message (shared/alerting/evaluation-queue.ts) and its reading by the
 * evaluator (shared/alerting/after-sync.ts): what is queued, how a large one is split, what the evaluator refuses.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { esbuildOptions, PROJECT_ROOT } from '#infra/burnrate-function.ts';
import { evaluationParts, hasWork, isIngestEvaluation, queueEvaluation, setLocalEvaluationSink, type Evaluation, type IngestEvaluation, type SyncEvaluation } from '#shared/alerting/evaluation-queue.ts';
import { parseEvaluation, parseSyncEvaluation } from '#shared/alerting/after-sync.ts';
import { evaluationOf } from '#shared/connections/phases/evaluation.ts';
import { LIMIT_DETAIL } from '#shared/connections/sync-plan.ts';
import type { Importer } from '#shared/connections/phases/run.ts';
import type { Connection } from '#shared/db/connections.ts';

const ACCOUNT = 'br_01JABCDEFGHJKMNPQRSTVWXYZ0';
const CONNECTION = 'con_01JABCDEFGHJKMNPQRSTVWXYZ0';
const hash = (i: number) => i.toString(16).padStart(64, '0');

const nothing: SyncEvaluation = { accountId: ACCOUNT, connectionId: CONNECTION, at: '2026-11-27T10:00:00.000Z', reached: [], limitLifted: false, spendMoved: false, discovered: [], unpriced: [] };
const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ keyHash: hash(i), provider: 'openai', name: `Key number ${i} of the production project` }));

afterEach(() => setLocalEvaluationSink(undefined));

describe('what a sync queues', () => {
  it('nothing when it found nothing: no spend moved, no key, no limit, no unpriced model', async () => {
    const sent: Evaluation[][] = [];
    setLocalEvaluationSink((m) => void sent.push(m));
    expect(hasWork(nothing)).toBe(false);
    await queueEvaluation(nothing);
    expect(sent).toEqual([]);
    for (const change of [{ spendMoved: true }, { limitLifted: true }, { reached: ['keys' as const] }, { unpriced: [{ provider: 'openai', model: 'gpt-x' }] }, { discovered: keys(1) }]) {
      expect(hasWork({ ...nothing, ...change }), JSON.stringify(change)).toBe(true);
    }
  });

  it('one message for a usual sync, which the evaluator reads back as it was sent', async () => {
    const sent: Evaluation[][] = [];
    setLocalEvaluationSink((m) => void sent.push(m));
    const evaluation: SyncEvaluation = { ...nothing, spendMoved: true, reached: ['trackedRequests'], discovered: keys(3), unpriced: [{ provider: 'openai', model: 'gpt-x' }] };
    await queueEvaluation(evaluation);
    expect(sent).toEqual([[evaluation]]);
    expect(parseSyncEvaluation(JSON.stringify(sent[0]![0]))).toEqual(evaluation);
    // A key the provider named with nothing, or at length, is still a key to name in a new_key alert.
    const named = { ...evaluation, discovered: [{ keyHash: hash(1), provider: 'openai', name: '' }, { keyHash: hash(2), provider: 'anthropic', name: 'n'.repeat(5_000) }] };
    expect(parseSyncEvaluation(JSON.stringify(named))).toEqual(named);
  });

  it('a plan’s 1,000 new keys with long names: parts under the size, every key once, the rest of the evaluation in the first part only', () => {
    const discovered = keys(1_000).map((k) => ({ ...k, name: `${k.name} ${'x'.repeat(200)}` }));
    const evaluation: SyncEvaluation = { ...nothing, spendMoved: true, limitLifted: true, unpriced: [{ provider: 'openai', model: 'gpt-x' }], discovered };
    const parts = evaluationParts(evaluation);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(200_000);
    expect(parts.flatMap((p) => p.discovered)).toEqual(discovered);
    expect(parts[0]).toMatchObject({ limitLifted: true, unpriced: evaluation.unpriced });
    for (const part of parts.slice(1)) expect(part).toMatchObject({ accountId: ACCOUNT, connectionId: CONNECTION, at: evaluation.at, reached: [], limitLifted: false, spendMoved: false, unpriced: [] });
    // Each part names its own first key: its new_key alert is raised once (its fired item), never taken by another part.
    expect(new Set(parts.map((p) => p.discovered[0]!.keyHash)).size).toBe(parts.length);
  });
});

describe('what an ingest queues', () => {
  const ingestNothing: IngestEvaluation = { source: 'ingest', accountId: ACCOUNT, at: '2026-11-27T10:00:00.000Z', reached: [], spendMoved: false, discovered: [], unpriced: [], rates: [] };

  it('its evaluation (the keys whose rate the anomaly rules read) reads back as it was sent; a sync’s and an ingest’s are told apart', async () => {
    const sent: Evaluation[][] = [];
    setLocalEvaluationSink((m) => void sent.push(m));
    expect(hasWork(ingestNothing)).toBe(false);
    await queueEvaluation(ingestNothing);
    expect(sent).toEqual([]);
    expect(hasWork({ ...ingestNothing, rates: [{ keyHash: hash(1), rated: false }] })).toBe(true);
    const evaluation: IngestEvaluation = { ...ingestNothing, spendMoved: true, reached: ['keys'], discovered: keys(2), rates: [{ keyHash: hash(1), rated: true }, { keyHash: hash(2), rated: false }] };
    await queueEvaluation(evaluation);
    expect(sent).toEqual([[evaluation]]);
    const back = parseEvaluation(JSON.stringify(sent[0]![0]))!;
    expect(back).toEqual(evaluation);
    expect(isIngestEvaluation(back)).toBe(true);
    expect(isIngestEvaluation(parseEvaluation(JSON.stringify({ ...nothing, spendMoved: true }))!)).toBe(false);
    // Neither shape half of each: an ingest's with a connection, a sync's without one, a rate that is not a key.
    expect(parseEvaluation(JSON.stringify({ ...evaluation, connectionId: CONNECTION }))).toBeUndefined();
    expect(parseEvaluation(JSON.stringify({ ...nothing, connectionId: undefined }))).toBeUndefined();
    expect(parseEvaluation(JSON.stringify({ ...evaluation, rates: [{ keyHash: 'x', rated: true }] }))).toBeUndefined();
    expect(parseSyncEvaluation(JSON.stringify(evaluation))).toBeUndefined();
  });

  it("POST /ingest's bundle carries no enforcement, anomaly rules or alert evaluation; the evaluator carries them", async () => {
    const inputsOf = async (entry: string) => {
      const built = await build({ ...esbuildOptions(join(PROJECT_ROOT, 'functions', `${entry}.ts`), join(PROJECT_ROOT, '.test-data', 'never-written.mjs')), write: false, metafile: true });
      // What ends up in the bundle (a module imported only for a function the bundle never calls weighs nothing).
      return Object.values(built.metafile!.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, v]) => v.bytesInOutput > 0).map(([k]) => k));
    };
    const ingest = await inputsOf('ingest/post');
    expect(ingest.filter((i) => /shared\/(enforcement|anomaly)\/|shared\/alerting\/(evaluate|after-sync|plan-limit)\.ts/.test(i))).toEqual([]);
    expect(ingest).toContain('shared/alerting/evaluation-queue.ts');
    const evaluator = await inputsOf('connections/evaluate');
    expect(evaluator).toEqual(expect.arrayContaining(['shared/ingest/after-ingest.ts', 'shared/enforcement/service.ts', 'shared/anomaly/service.ts', 'shared/alerting/evaluate.ts']));
  }, 60_000);

  it('a local queue that takes an ingest’s evaluation is awaited (what the local stack shows with the answer)', async () => {
    let handed = false;
    setLocalEvaluationSink(async () => {
      await new Promise((r) => setTimeout(r, 20));
      handed = true;
    });
    await queueEvaluation({ ...ingestNothing, spendMoved: true });
    expect(handed).toBe(true);
  });

  it('further parts carry only keys: the rates, limits and unpriced models go in the first', () => {
    const evaluation: IngestEvaluation = { ...ingestNothing, spendMoved: true, reached: ['trackedRequests'], unpriced: [{ provider: 'openai', model: 'gpt-x' }], rates: [{ keyHash: hash(1), rated: true }], discovered: keys(1_000).map((k) => ({ ...k, name: 'x'.repeat(300) })) };
    const parts = evaluationParts(evaluation);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts[0]).toMatchObject({ source: 'ingest', rates: evaluation.rates, reached: ['trackedRequests'], spendMoved: true });
    for (const part of parts.slice(1)) expect(part).toMatchObject({ source: 'ingest', rates: [], reached: [], spendMoved: false, unpriced: [] });
    expect(parts.flatMap((p) => p.discovered)).toEqual(evaluation.discovered);
  });
});

describe('what a sync found, as its evaluation', () => {
  const importer = (result: Partial<Importer['result']>, found: { discovered?: SyncEvaluation['discovered']; unpriced?: SyncEvaluation['unpriced'] } = {}) =>
    ({
      result: { status: 'done', cellsChanged: 0, settleCellsChanged: 0, transactions: 0, keysCreated: 0, keysUpdated: 0, limitsReached: [], ...result },
      discovered: found.discovered ?? [],
      unpriced: new Map((found.unpriced ?? []).map((m) => [m.model, m])),
    }) as unknown as Importer;
  const conn = (statusDetail: string | null) => ({ accountId: ACCOUNT, id: CONNECTION, statusDetail }) as Connection;
  const now = new Date('2026-11-27T10:00:00.000Z');

  it('spend moved by usage, or by a settled day alone (a bill that raises a day can cross a budget)', () => {
    expect(evaluationOf(conn(null), importer({ cellsChanged: 2 }), [], now).spendMoved).toBe(true);
    expect(evaluationOf(conn(null), importer({ settleCellsChanged: 1 }), [], now).spendMoved).toBe(true);
    expect(hasWork(evaluationOf(conn(null), importer({}), [], now))).toBe(false);
  });

  it('a limit lifted only when the connection said one held usage back and none does now; the sync’s clock', () => {
    const held = conn(`${LIMIT_DETAIL} keys`);
    expect(evaluationOf(held, importer({}), [], now)).toMatchObject({ limitLifted: true, reached: [], at: now.toISOString() });
    expect(evaluationOf(held, importer({}), ['keys'], now)).toMatchObject({ limitLifted: false, reached: ['keys'] });
    expect(evaluationOf(conn('The last sync could not finish'), importer({}), [], now).limitLifted).toBe(false);
  });

  it('carries the keys discovered and the models without a price', () => {
    const e = evaluationOf(conn(null), importer({ keysCreated: 2 }, { discovered: keys(2), unpriced: [{ provider: 'openai', model: 'gpt-x' }] }), [], now);
    expect(e).toMatchObject({ accountId: ACCOUNT, connectionId: CONNECTION, discovered: keys(2), unpriced: [{ provider: 'openai', model: 'gpt-x' }] });
  });
});

describe('what the evaluator refuses (dropped with a log line: retrying cannot fix it)', () => {
  const valid = { ...nothing, spendMoved: true, discovered: keys(1) };
  it.each([
    ['not JSON', '{'],
    ['another account id shape', JSON.stringify({ ...valid, accountId: 'acct_1' })],
    ['a connection id of another kind', JSON.stringify({ ...valid, connectionId: ACCOUNT })],
    ['a key hash that is not SHA-256 hex', JSON.stringify({ ...valid, discovered: [{ keyHash: 'abc', provider: 'openai' }] })],
    ['an unknown limit', JSON.stringify({ ...valid, reached: ['users'] })],
    ['a clock that is not a time', JSON.stringify({ ...valid, at: 'yesterday' })],
    ['a field it does not know', JSON.stringify({ ...valid, extra: 1 })],
    ['a missing field', JSON.stringify({ ...valid, spendMoved: undefined })],
  ])('%s', (_, body) => {
    expect(parseSyncEvaluation(body)).toBeUndefined();
  });
});
