/**
 * The money ceiling: every spend aggregate (a key's spend per day × model, day, month and in total; the account's per
 * day and month) stays at or below $9,000,000,000 = 9×10^15 µ$, below 2^53, so every aggregate is a safe integer of
 * micro-dollars. Ingestion fits events under it (shared/ingest/ceiling.ts); the one writer's transactions re-check it
 * (shared/db/usage-writes.ts).
 */
export const MONEY_CEILING_MICROS = 9_000_000_000_000_000n;
