/**
 * The spend-anomaly rule's figures (docs/features/budgets-and-alerts.md, "Runaway and leaked keys"), pure:
 * - the RATE: what a key spent in the last hour, from its hour counters (shared/db/rolling.ts): the current hour's
 *   spend plus the previous hour's in proportion to the part of it still inside the last 60 minutes (a sliding
 *   window over two fixed ones);
 * - the BASELINE: its average hourly spend over its last 14 complete UTC days, from the stored per-day items; days
 *   before the key existed do not count (a key two days old is compared with those two days), and a key new today has
 *   baseline 0;
 * - the rule's test: rate ≥ minUsdPerHour and rate ≥ multiplier × baseline, in integers.
 */
import { hourCostName, isoHour } from '#shared/db/rolling.ts';
import { addDays } from '#shared/time/periods.ts';

const HOUR_MS = 3_600_000;
export const BASELINE_DAYS = 14;

type Counters = Record<string, unknown>;

const micros = (v: unknown): bigint => (typeof v === 'bigint' ? v : typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n);

/** The key's spend in the hour starting at `hourStart` (ms), from its item. */
const hourMicros = (item: Counters, hourStart: number): bigint => micros(item[hourCostName(isoHour(hourStart))]);

/** What the key spent in the 60 minutes before `now` (µ$), from its hour counters. */
export function rateMicros(item: Counters, now: Date): bigint {
  const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const elapsed = BigInt(now.getTime() - start);
  const previous = hourMicros(item, start - HOUR_MS);
  return hourMicros(item, start) + (previous * (BigInt(HOUR_MS) - elapsed)) / BigInt(HOUR_MS);
}

/** The key's spend hour by hour over the last 24 hours and the current one, oldest first (the incident chart). */
export function lastDayByHour(item: Counters, now: Date): { hour: string; micros: bigint }[] {
  const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  return Array.from({ length: 25 }, (_, i) => {
    const t = start - (24 - i) * HOUR_MS;
    return { hour: isoHour(t), micros: hourMicros(item, t) };
  });
}

/** The 14 complete UTC days before `today`, oldest first. */
export const baselineDays = (today: string): string[] => Array.from({ length: BASELINE_DAYS }, (_, i) => addDays(today, -(BASELINE_DAYS - i)));

export interface Baseline {
  /** Spend over the days counted (µ$). */
  totalMicros: bigint;
  /** Complete days counted (0 for a key new today). */
  days: number;
}

/**
 * The baseline from the key's per-day spend of the 14 days before `today` and the day it was first seen: days count
 * from the earlier of its first seen day and its first day with spend (a connection imports history from before it
 * was found), never from before the window.
 */
export function baselineOf(dayMicros: ReadonlyMap<string, bigint>, today: string, firstSeenDay: string | undefined): Baseline {
  const days = baselineDays(today);
  const firstSpend = days.find((d) => (dayMicros.get(d) ?? 0n) > 0n);
  const first = [firstSeenDay, firstSpend].filter((d): d is string => d !== undefined).sort()[0] ?? today;
  const counted = days.filter((d) => d >= first);
  return { totalMicros: counted.reduce((n, d) => n + (dayMicros.get(d) ?? 0n), 0n), days: counted.length };
}

/** The baseline as dollars an hour (µ$ an hour, rounded down). */
export const baselineMicrosPerHour = (b: Baseline): bigint => (b.days === 0 ? 0n : b.totalMicros / BigInt(b.days * 24));

/**
 * The rule's test: rate ≥ minUsdPerHour and rate ≥ multiplier × baseline, exactly (multiplier has ≤ 2 decimals:
 * rate × days × 24 × 100 ≥ multiplier × 100 × total).
 */
export function isAnomalous(rate: bigint, baseline: Baseline, rule: { minUsdPerHour: number; multiplier: number }): boolean {
  const min = BigInt(Math.round(rule.minUsdPerHour * 1_000_000));
  if (rate < min || rate <= 0n) return false;
  if (baseline.days === 0) return true;
  const m = BigInt(Math.round(rule.multiplier * 100));
  return rate * BigInt(baseline.days * 24) * 100n >= m * baseline.totalMicros;
}

