/**
 * POST /ingest: price each event, drop repeats, and write the rest exactly once with their aggregates.
 * One bad event is reported by index and does not sink the batch.
 */
import { isRejection, priceEvent, type PricedEvent, type Rejection } from '#shared/ingest/events.ts';
import { planChunks, type ChunkContext } from '#shared/ingest/chunks.ts';
import { writeChunk } from '#shared/db/usage-writes.ts';
import { loadIngestContext } from '#shared/db/provider-keys.ts';
import { currentPeriod } from '#shared/billing/plans.ts';
import { isoDate, isoMonth } from '#shared/time/periods.ts';
import { logger } from '#shared/http/logger.ts';
import { NotFound } from '#shared/http/errors.ts';

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

export async function ingest(accountId: string, rawEvents: readonly unknown[], now = new Date()): Promise<IngestResult> {
  const rejected: Rejection[] = [];
  const events: PricedEvent[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  rawEvents.forEach((raw, index) => {
    const result = priceEvent(raw, index, now);
    if (isRejection(result)) rejected.push(result);
    else if (seen.has(result.requestId)) duplicates += 1; // a repeat inside the batch counts once
    else {
      seen.add(result.requestId);
      events.push(result);
    }
  });
  if (events.length === 0) return { accepted: 0, duplicates, rejected };

  const { account, known } = await loadIngestContext(accountId, [...new Set(events.map((e) => e.keyHash))]);
  if (!account) throw new NotFound('The account does not exist.');
  const period = currentPeriod(account, now);
  const ctx: ChunkContext & { knownKeys: Set<string> } = { knownKeys: known, today: isoDate(now), month: isoMonth(now) };

  let accepted = 0;
  const queue = planChunks(events, ctx).map((chunk) => ({ chunk, attempt: 0 }));
  while (queue.length > 0) {
    const { chunk, attempt } = queue.shift()!;
    const outcome = await writeChunk({ accountId, chunk, now, today: ctx.today, month: ctx.month, periodStart: period.start });
    if (outcome.status === 'written') {
      accepted += chunk.events.length;
      continue;
    }
    if (attempt + 1 >= MAX_ATTEMPTS) {
      logger.error('ingest chunk gave up', { events: chunk.events.length, attempts: attempt + 1 });
      for (const e of chunk.events) {
        rejected.push({ index: e.index, code: 'unavailable', message: 'Could not be stored now; send it again (it is idempotent).' });
      }
      continue;
    }
    let remaining = chunk.events;
    if (outcome.status === 'conditions') {
      // Events counted before (a replay, or a racing batch) are duplicates; keys created meanwhile are known now.
      const dup = new Set(outcome.duplicateRequestIds);
      duplicates += dup.size;
      remaining = chunk.events.filter((e) => !dup.has(e.requestId));
      outcome.existingKeys.forEach((k) => ctx.knownKeys.add(k));
    } else {
      await backoff(attempt);
    }
    queue.unshift(...planChunks(remaining, ctx).map((next) => ({ chunk: next, attempt: attempt + 1 })));
  }
  rejected.sort((a, b) => a.index - b.index);
  return { accepted, duplicates, rejected };
}
