/**
 * POST /ingest: price each event, drop repeats, fit the plan's limits, and write the rest exactly once with
 * their aggregates; then queue what follows the spend for the evaluator (shared/ingest/after-ingest.ts). One bad event is reported by index and does not sink the batch.
 */
import { listClosedMonths } from '#shared/db/months.ts';
import { isRejection, priceEvent, type PricedEvent, type Rejection } from '#shared/ingest/events.ts';
import { planChunks, type Chunk, type ChunkContext } from '#shared/ingest/chunks.ts';
import { fitToLimits } from '#shared/ingest/limits.ts';
import { fitToCeiling, type CeilingRoom } from '#shared/ingest/ceiling.ts';
import { writeChunk } from '#shared/db/usage-writes.ts';
import { isoHour, keptHours, ratedAfterIngest, recentDays } from '#shared/db/rolling.ts';
import { applyOwnPrices, ownPriceNames } from '#shared/ingest/own-prices.ts';
import { countedBefore, loadCeilingRoom, loadIngestContext } from '#shared/db/ingest-context.ts';
import { countCustomers, knownCustomers } from '#shared/db/customers.ts';
import { admitCustomers } from '#shared/ingest/customers.ts';
import { getAccount } from '#shared/db/accounts.ts';
import { trackedRequests } from '#shared/db/usage.ts';
import { currentPeriod } from '#shared/billing/plans.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { isoDate, isoMonth } from '#shared/time/periods.ts';
import { logger } from '#shared/http/logger.ts';
import { NotFound } from '#shared/http/errors.ts';
import type { Discovered } from '#shared/alerting/evaluate.ts';
import { queueEvaluation } from '#shared/alerting/evaluation-queue.ts';
import type { PlanLimitReached } from '#shared/alerting/plan-limit.ts';
import { unpricedModels } from '#shared/alerting/unpriced-model.ts';

export interface IngestResult {
  accepted: number;
  duplicates: number;
  rejected: Rejection[];
}

/** Attempts per chunk before its events are reported `unavailable` (the client may resend them: it is idempotent). */
const MAX_ATTEMPTS = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Full-jitter exponential backoff. */
const backoff = (attempt: number) => sleep(Math.random() * Math.min(1000, 25 * 2 ** attempt));

/** Validates and prices every event; a repeat of a requestId inside the batch counts once, as a duplicate. */
function priceAll(rawEvents: readonly unknown[], now: Date) {
  const rejected: Rejection[] = [];
  const events: PricedEvent[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  rawEvents.forEach((raw, index) => {
    const result = priceEvent(raw, index, now);
    if (isRejection(result)) rejected.push(result);
    else if (seen.has(result.requestId)) duplicates += 1;
    else {
      seen.add(result.requestId);
      events.push(result);
    }
  });
  return { events, rejected, duplicates };
}

export async function ingest(accountId: string, rawEvents: readonly unknown[], now = new Date()): Promise<IngestResult> {
  const priced = priceAll(rawEvents, now);
  const rejected = priced.rejected;
  let duplicates = priced.duplicates;
  if (priced.events.length === 0) return { accepted: 0, duplicates, rejected };

  const monthPeriod = currentPeriod({ plan: 'FREE' }, now);
  const keyHashes = [...new Set(priced.events.map((e) => e.keyHash))];
  const months = [...new Set(priced.events.map((e) => e.date.slice(0, 7)))];
  // The account's own prices are read in the same BatchGetItem as the rest of the context: a price written before
  // this request prices its events (no cache).
  const context = await loadIngestContext(accountId, keyHashes, monthPeriod.start, months, ownPriceNames(priced.events), isoMonth(now));
  const { account, known } = context;
  priced.events = applyOwnPrices(priced.events, context.ownPrices);
  if (!account) throw new NotFound('The account does not exist.');
  // One source per provider: events of a provider whose spend comes from a connection are refused.
  const connected = new Set(account.connectedProviders ?? []);
  if (connected.size > 0) {
    priced.events = priced.events.filter((e) => {
      if (!connected.has(e.provider)) return true;
      rejected.push({ index: e.index, code: 'provider_connected', message: `The account has a ${e.provider} connection: its spend comes from the connection, so events of ${e.provider} are not counted.` });
      return false;
    });
  }
  const period = currentPeriod(account, now);
  const usedRequests = period.start === monthPeriod.start ? context.trackedRequests : await trackedRequests(accountId, period.start);
  const limits = limitsInForce(account, now);
  const ctx: ChunkContext & { knownKeys: Set<string> } = {
    knownKeys: known,
    today: isoDate(now),
    month: isoMonth(now),
    recentDays: new Set(recentDays(isoDate(now))),
    keptHours: new Set(keptHours(now)),
    nowHour: isoHour(now),
    closedMonths: context.closedMonths,
  };

  /**
   * Fits events under the money ceiling, then into the plan's room left; reports the rest (but repeats of events
   * counted before are duplicates). An event refused by the ceiling takes no plan room.
   */
  /** Which plan limits refused events (for the plan_limit alert, which says which). */
  const limitsReached = new Set<PlanLimitReached>();
  const fit = async (events: PricedEvent[], used: { requests: number; keys: number }, ceiling: CeilingRoom): Promise<PricedEvent[]> => {
    const underCeiling = fitToCeiling(events, ceiling);
    const room = { requests: limits.trackedRequests - used.requests, newKeys: limits.keys - used.keys, known: ctx.knownKeys };
    const { allowed, refused: overLimit } = fitToLimits(underCeiling.allowed, room);
    const refused = [...underCeiling.refused, ...overLimit];
    if (refused.length === 0) return allowed;
    const byIndex = new Map(events.map((e) => [e.index, e]));
    const counted = await countedBefore(accountId, refused.map((r) => byIndex.get(r.index)!.requestId));
    for (const r of refused) {
      if (counted.has(byIndex.get(r.index)!.requestId)) duplicates += 1;
      else {
        rejected.push(r);
        if (r.code === 'plan_limit_reached') limitsReached.add('trackedRequests');
        if (r.code === 'key_limit_reached') limitsReached.add('keys');
      }
    }
    return allowed;
  };

  let accepted = 0;
  const discovered: Discovered[] = [];
  /** Keys this ingest wrote spend for, and those it created (a key's rate exists from the second ingest that sees it on the day). */
  const spentOn = new Set<string>();
  const created = new Set<string>();
  /** Events written without a given cost: their models are checked for a price (the `unpriced_model` alert). */
  const written: PricedEvent[] = [];
  const plan = (events: PricedEvent[], attempt: number) => planChunks(events, ctx).map((chunk) => ({ chunk, attempt }));
  const fitted = await fit(priced.events, { requests: usedRequests, keys: account.keyCount ?? 0 }, context.ceiling);
  // Customers: the month's new ones while the plan has room, the rest under `(other customers)` (one BatchGetItem).
  const named = fitted.filter((e) => e.customerId !== undefined);
  const customers = named.length > 0 ? await knownCustomers(accountId, [...new Map(named.map((e) => [`${e.date.slice(0, 7)}|${e.customerId}`, { month: e.date.slice(0, 7), customerId: e.customerId! }])).values()]) : undefined;
  const admitted = customers ? admitCustomers(fitted, customers.known, customers.counts, limits.customers) : { events: fitted, added: new Map<string, number>() };
  const queue: { chunk: Chunk; attempt: number }[] = plan(admitted.events, 0);
  while (queue.length > 0) {
    const { chunk, attempt } = queue.shift()!;
    const outcome = await writeChunk({ accountId, chunk, now, today: ctx.today, month: ctx.month, periodStart: period.start, limits });
    if (outcome.status === 'written') {
      accepted += chunk.events.length;
      for (const e of chunk.events) if (!e.costGiven && !e.priced) written.push(e);
      for (const key of chunk.keys.values()) {
        if (key.isNew) discovered.push({ keyHash: key.keyHash, provider: key.provider, ...(key.hint ? { hint: key.hint } : {}) });
        if (key.isNew) created.add(key.keyHash);
        if (key.hours && key.hours.size > 0) spentOn.add(key.keyHash);
      }
      continue;
    }
    if (attempt + 1 >= MAX_ATTEMPTS) {
      logger.error('ingest chunk gave up', { events: chunk.events.length, attempts: attempt + 1 });
      for (const e of chunk.events) {
        rejected.push({ index: e.index, code: 'unavailable', message: 'Could not be stored now; send it again (it is idempotent).' });
      }
      continue;
    }
    if (outcome.status === 'conditions') {
      // Events counted before (a replay, or a racing batch) are duplicates; keys created meanwhile are known now.
      const dup = new Set(outcome.duplicateRequestIds);
      duplicates += dup.size;
      outcome.existingKeys.forEach((k) => ctx.knownKeys.add(k));
      // A month closed meanwhile (its guard failed): its events are corrections now.
      if (outcome.changedCells.length > 0) ctx.closedMonths = new Set((await listClosedMonths(accountId, '0000-01', ctx.month, true)).map((m) => m.month));
      queue.unshift(...plan(chunk.events.filter((e) => !dup.has(e.requestId)), attempt + 1));
    } else if (outcome.status === 'limit' || outcome.status === 'ceiling') {
      // A racing batch took the room we counted on: re-read it (strongly consistent) and refit all not yet written.
      const pending = [...chunk.events, ...queue.splice(0).flatMap((q) => q.chunk.events)];
      const [fresh, requests, ceiling] = await Promise.all([
        getAccount(accountId, true),
        trackedRequests(accountId, period.start, true),
        loadCeilingRoom(accountId, [...new Set(pending.map((e) => e.keyHash))], [...new Set(pending.map((e) => e.date.slice(0, 7)))]),
      ]);
      queue.push(...plan(await fit(pending, { requests, keys: fresh?.keyCount ?? 0 }, ceiling), attempt + 1));
    } else {
      await backoff(attempt);
      queue.unshift(...plan(chunk.events, attempt + 1));
    }
  }
  rejected.sort((a, b) => a.index - b.index);
  // The months' new customers counted (after their events: a failed write can only over-count, never let one past).
  if (accepted > 0) await Promise.all([...admitted.added].map(([month, n]) => countCustomers(accountId, month, n)));
  // What follows the spend (alerts, spend-anomaly rules, the stop budgets' pass over the reporter's block list) runs in
  // the evaluator, off this request (shared/ingest/after-ingest.ts). A key's rate exists from the second ingest that
  // sees it on the day (one that creates it, or the day's first, starts the count).
  await queueEvaluation({
    source: 'ingest',
    accountId,
    at: now.toISOString(),
    reached: [...limitsReached],
    spendMoved: accepted > 0,
    discovered,
    unpriced: unpricedModels(written, context.ownPrices),
    rates: [...spentOn].map((keyHash) => ({ keyHash, rated: !created.has(keyHash) && ratedAfterIngest(context.known.has(keyHash) ? { lastSeenAt: context.lastSeen.get(keyHash) } : undefined, now) })),
  });
  return { accepted, duplicates, rejected };
}
