/** Request schemas of /prices (zod/mini, strict). Names are normalized as ingestion normalizes them (trimmed, lower-case). */
import * as z from 'zod/mini';
import { hasAtMostSixDecimals } from '#shared/pricing/money.ts';
import { providerId } from '#shared/providers/canonical.ts';

/** Dollars per million tokens: the most an own price may be (keeps one event's cost far below the money ceiling). */
export const MAX_PRICE_USD = 1_000_000;

const price = (field: string) =>
  z.number(`${field} must be a number (US dollars per million tokens).`).check(
    z.minimum(0, `${field} must be ≥ 0.`),
    z.maximum(MAX_PRICE_USD, `${field} must be at most ${MAX_PRICE_USD}.`),
    z.refine(hasAtMostSixDecimals, `${field} must have at most 6 decimals.`),
  );

export const PriceParams = z.strictObject({
  provider: z.string().check(
    // A known provider's any spelling is that provider (shared/providers/canonical.ts); others trimmed, lower-cased.
    z.overwrite(providerId),
    z.regex(/^[a-z0-9][a-z0-9._-]{0,31}$/, 'provider must be 1–32 characters of a-z, 0-9, ".", "_" or "-".'),
  ),
  model: z.string().check(
    z.trim(),
    z.toLowerCase(),
    z.minLength(1, 'model must not be empty.'),
    z.maxLength(128, 'model must be at most 128 characters.'),
    z.regex(/^[^\u0000-\u001f#]+$/, 'model must not contain control characters or "#".'),
  ),
});
export type PriceParams = z.infer<typeof PriceParams>;

/** One tier's rates: `cachedInput` is required; the cache writes default to the tier's `input`. */
const tierRates = (tier: string) =>
  z.strictObject(
    {
      input: price(`tiers.${tier}.input`),
      cachedInput: price(`tiers.${tier}.cachedInput`),
      cacheWrite: z.optional(price(`tiers.${tier}.cacheWrite`)),
      cacheWrite1h: z.optional(price(`tiers.${tier}.cacheWrite1h`)),
      output: price(`tiers.${tier}.output`),
    },
    `tiers.${tier} must be an object of rates.`,
  );

/** The most input tokens a long-context threshold may name (the largest context windows are 1M–2M tokens). */
export const MAX_LONG_CONTEXT_THRESHOLD = 10_000_000;

/** Long-context rates: every token of a call past `aboveInputTokens` input tokens is priced at them. */
const longContextRates = z.strictObject(
  {
    aboveInputTokens: z
      .int('longContext.aboveInputTokens must be an integer (input tokens).')
      .check(z.minimum(1, 'longContext.aboveInputTokens must be ≥ 1.'), z.maximum(MAX_LONG_CONTEXT_THRESHOLD, `longContext.aboveInputTokens must be at most ${MAX_LONG_CONTEXT_THRESHOLD}.`)),
    input: price('longContext.input'),
    cachedInput: price('longContext.cachedInput'),
    cacheWrite: z.optional(price('longContext.cacheWrite')),
    cacheWrite1h: z.optional(price('longContext.cacheWrite1h')),
    output: price('longContext.output'),
  },
  'longContext must be an object of rates with aboveInputTokens.',
);

/**
 * `cachedInput`, `cacheWrite` (5-minute writes) and `cacheWrite1h` (1-hour writes) default to `input`. `tiers` holds
 * the rates of the batch, flex and priority tiers where they differ from the rules (batch: half; flex: the provider's
 * published factor; priority: the standard rates, counted as unpriced). `longContext` holds the rates of a call past
 * its `aboveInputTokens` (Anthropic's long-context pricing); absent: every call at the standard rates.
 */
export const PutPriceBody = z.strictObject(
  {
    input: price('input'),
    cachedInput: z.optional(price('cachedInput')),
    cacheWrite: z.optional(price('cacheWrite')),
    cacheWrite1h: z.optional(price('cacheWrite1h')),
    output: price('output'),
    tiers: z.optional(
      z.strictObject(
        { batch: z.optional(tierRates('batch')), flex: z.optional(tierRates('flex')), priority: z.optional(tierRates('priority')) },
        'tiers must be an object with batch, flex and/or priority.',
      ),
    ),
    longContext: z.optional(longContextRates),
  },
  'The body must be a JSON object.',
);
export type PutPriceBody = z.infer<typeof PutPriceBody>;
