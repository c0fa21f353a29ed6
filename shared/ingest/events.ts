/**
 * One event's way from JSON to a priced, normalized record — or to a rejection with a code.
 * Pure: no I/O. Money in integer micro-dollars.
 */
import { safeParse } from 'zod/mini';
import { IngestEvent } from '#shared/ingest/schemas.ts';
import { issuesToFieldErrors } from '#shared/http/validate.ts';
import { costMicros, hasAtMostSixDecimals, isExact, usdToMicros, type Tier } from '#shared/pricing/pricing.ts';
import { isoDate } from '#shared/time/periods.ts';
import type { PricedEvent } from '#shared/db/usage-writes.ts';

export type { PricedEvent };

export const MAX_FUTURE_MS = 5 * 60 * 1000;

export const MAX_AGE_MS = 35 * 24 * 60 * 60 * 1000;

export type RejectCode =
  | 'invalid_event'
  | 'timestamp_in_future'
  | 'timestamp_too_old'
  | 'plan_limit_reached'
  | 'key_limit_reached'
  | 'amount_out_of_range'
  | 'provider_connected'
  | 'unavailable';

/** The cache parts (reads, 5-minute and 1-hour writes) together are more than the input they are parts of. */
export const CACHE_PARTS_MESSAGE =
  'cachedInputTokens + cacheWriteInputTokens + cacheWrite1hInputTokens: together must not be more than inputTokens (they are parts of it).';

export interface Rejection {
  index: number;
  code: RejectCode;
  message: string;
}

export function priceEvent(raw: unknown, index: number, now: Date): PricedEvent | Rejection {
  const parsed = safeParse(IngestEvent, raw);
  if (!parsed.success) {
    const message = issuesToFieldErrors(parsed.error.issues)
      .map((e) => (e.path ? `${e.path}: ${e.message}` : e.message))
      .join('; ');
    return { index, code: 'invalid_event', message };
  }
  const e = parsed.data;
  const cached = e.cachedInputTokens ?? 0;
  if (cached > e.inputTokens) {
    return { index, code: 'invalid_event', message: 'cachedInputTokens: must not be more than inputTokens.' };
  }
  const cacheWrite = e.cacheWriteInputTokens ?? 0;
  const cacheWrite1h = e.cacheWrite1hInputTokens ?? 0;
  if (cached + cacheWrite + cacheWrite1h > e.inputTokens) {
    return { index, code: 'invalid_event', message: CACHE_PARTS_MESSAGE };
  }
  if (e.costUsd !== undefined && !hasAtMostSixDecimals(e.costUsd)) {
    return { index, code: 'invalid_event', message: 'costUsd: must have at most 6 decimals.' };
  }
  const at = e.timestamp === undefined ? now : new Date(e.timestamp);
  if (at.getTime() > now.getTime() + MAX_FUTURE_MS) {
    return { index, code: 'timestamp_in_future', message: 'timestamp: more than 5 minutes ahead of the server clock.' };
  }
  if (at.getTime() < now.getTime() - MAX_AGE_MS) {
    return { index, code: 'timestamp_too_old', message: 'timestamp: older than 35 days.' };
  }
  const usage = {
    provider: e.provider,
    model: e.model,
    inputTokens: e.inputTokens,
    cachedInputTokens: cached,
    cacheWriteInputTokens: cacheWrite,
    cacheWrite1hInputTokens: cacheWrite1h,
    outputTokens: e.outputTokens,
    tier: e.serviceTier ?? 'standard',
    webSearchRequests: e.webSearchRequests ?? 0,
    webFetchRequests: e.webFetchRequests ?? 0,
  };
  const computed = e.costUsd !== undefined ? { costMicros: usdToMicros(e.costUsd), priced: true } : costMicros(usage);
  return {
    index,
    requestId: e.requestId,
    keyHash: e.keyHash,
    ...(e.keyHint === undefined ? {} : { keyHint: e.keyHint }),
    ...usage,
    costMicros: computed.costMicros,
    priced: isExact(computed),
    ...(e.costUsd !== undefined ? { costGiven: true as const } : {}),
    timestamp: at.toISOString(),
    date: isoDate(at),
    ...(e.customerId !== undefined ? { customerId: e.customerId } : {}),
    ...(e.feature !== undefined ? { feature: e.feature } : {}),
  };
}

export const isRejection = (value: PricedEvent | Rejection): value is Rejection => 'code' in value;
