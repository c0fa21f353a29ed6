/** Request schemas of POST /ingest. The batch is checked as a whole; each event on its own (one bad event does not sink the batch). */
import * as z from 'zod/mini';
import { providerId } from '#shared/providers/canonical.ts';

export const MAX_EVENTS = 1000;

const MAX_TOKENS = 1_000_000_000;
const EVENTS_MESSAGE = `events must be an array of 1–${MAX_EVENTS} events.`;

/** The body: 1–1000 events. Events are validated one by one by `IngestEvent`, so here they are only "objects". */
export const IngestBody = z.strictObject({
  events: z.array(z.unknown(), EVENTS_MESSAGE).check(z.minLength(1, EVENTS_MESSAGE), z.maxLength(MAX_EVENTS, EVENTS_MESSAGE)),
});

export type IngestBody = z.infer<typeof IngestBody>;

const tokens = (field: string) =>
  z.number(`${field} must be a number.`).check(
    z.int(`${field} must be an integer.`),
    z.minimum(0, `${field} must be ≥ 0.`),
    z.maximum(MAX_TOKENS, `${field} must be at most ${MAX_TOKENS}.`),
  );

/** Where a month's customers past the plan's limit are counted (groupBy=customer, GET /customers). */
export const OTHER_CUSTOMERS = '(other customers)';

export const IngestEvent = z.strictObject({
  requestId: z.string('requestId must be a string.').check(z.minLength(1, 'requestId must not be empty.'), z.maxLength(128, 'requestId must be at most 128 characters.')),
  keyHash: z.string('keyHash must be a string.').check(z.regex(/^[0-9a-f]{64}$/, 'keyHash must be a SHA-256 in 64 lower-case hex characters.')),
  keyHint: z.optional(
    z.string().check(z.trim(), z.minLength(1, 'keyHint must not be empty.'), z.maxLength(32, 'keyHint must be at most 32 characters (send only a few characters of the key).')),
  ),
  provider: z.string('provider must be a string.').check(
    // A known provider's any spelling is that provider (shared/providers/canonical.ts); others trimmed, lower-cased.
    z.overwrite(providerId),
    z.regex(/^[a-z0-9][a-z0-9._-]{0,31}$/, 'provider must be 1–32 characters of a-z, 0-9, ".", "_" or "-".'),
  ),
  model: z.string('model must be a string.').check(
    z.trim(),
    z.toLowerCase(),
    z.minLength(1, 'model must not be empty.'),
    z.maxLength(128, 'model must be at most 128 characters.'),
    z.regex(/^[^\u0000-\u001f#]+$/, 'model must not contain control characters or "#".'),
  ),
  inputTokens: tokens('inputTokens'),
  outputTokens: tokens('outputTokens'),
  cachedInputTokens: z.optional(tokens('cachedInputTokens')),
  /** Parts of inputTokens written to the provider's cache: 5-minute and 1-hour lifetimes (Anthropic prices them apart). */
  cacheWriteInputTokens: z.optional(tokens('cacheWriteInputTokens')),
  cacheWrite1hInputTokens: z.optional(tokens('cacheWrite1hInputTokens')),
  /** The tier the call ran in (priced at that tier's price); default `standard`. */
  serviceTier: z.optional(z.enum(['standard', 'batch', 'flex', 'priority'], 'serviceTier must be one of standard, batch, flex, priority.')),
  /** Web searches the call made (server tool use), priced per 1,000 from the price table. */
  webSearchRequests: z.optional(
    z.number('webSearchRequests must be a number.').check(
      z.int('webSearchRequests must be an integer.'),
      z.minimum(0, 'webSearchRequests must be ≥ 0.'),
      z.maximum(1_000_000, 'webSearchRequests must be at most 1000000.'),
    ),
  ),
  /** Web fetches the call made (Anthropic server tool use), priced from the table (no charge beyond tokens today). */
  webFetchRequests: z.optional(
    z.number('webFetchRequests must be a number.').check(
      z.int('webFetchRequests must be an integer.'),
      z.minimum(0, 'webFetchRequests must be ≥ 0.'),
      z.maximum(1_000_000, 'webFetchRequests must be at most 1000000.'),
    ),
  ),
  costUsd: z.optional(z.number('costUsd must be a number.').check(z.minimum(0, 'costUsd must be ≥ 0.'), z.maximum(1_000_000_000, 'costUsd must be at most 1000000000.'))),
  timestamp: z.optional(z.iso.datetime({ offset: true, error: 'timestamp must be an ISO 8601 date-time.' })),
  /** The application's own customer of the call (the reporter's `x-burnrate-customer`): 1–128 printable characters. */
  customerId: z.optional(
    z.string('customerId must be a string.').check(
      z.refine((v) => [...v].length >= 1 && [...v].length <= 128, 'customerId must be 1–128 characters.'),
      z.refine((v) => !/\p{Cc}/u.test(v), 'customerId must be printable (no control characters).'),
      z.refine((v) => v !== OTHER_CUSTOMERS, `customerId must not be "${OTHER_CUSTOMERS}" (the name of the customers past the plan's limit).`),
    ),
  ),
  /** The application's feature of the call (`x-burnrate-feature`): 1–64 printable characters. */
  feature: z.optional(
    z.string('feature must be a string.').check(
      z.refine((v) => [...v].length >= 1 && [...v].length <= 64, 'feature must be 1–64 characters.'),
      z.refine((v) => !/\p{Cc}/u.test(v), 'feature must be printable (no control characters).'),
    ),
  ),
});

export type IngestEvent = z.infer<typeof IngestEvent>;
