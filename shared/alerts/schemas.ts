import * as z from 'zod/mini';
import { Cursor, Limit } from '#shared/http/pagination.ts';
import { ALERT_TYPES } from '#shared/alerting/model.ts';
import { isId } from '#shared/ids.ts';

const TYPE_MESSAGE = `type must be one of ${ALERT_TYPES.join(', ')}.`;
const KeyHashFilter = z.string('keyHash must be a key’s SHA-256 (64 lower-case hex).').check(z.regex(/^[0-9a-f]{64}$/, 'keyHash must be a key’s SHA-256 (64 lower-case hex).'));

export const ListAlertsQuery = z.strictObject({
  status: z.optional(z.enum(['triggered', 'acknowledged'], 'status must be triggered or acknowledged.')),
  type: z.optional(z.enum(ALERT_TYPES, TYPE_MESSAGE)),
  keyHash: z.optional(KeyHashFilter),
  limit: Limit,
  cursor: Cursor,
});
export type ListAlertsQuery = z.infer<typeof ListAlertsQuery>;

export const AlertParams = z.strictObject({ id: z.string() });

/** At most this many ids in one bulk acknowledge (docs/features/budgets-and-alerts.md). */
export const MAX_ACKNOWLEDGE_IDS = 100;

/** POST /alerts/acknowledge: the alerts named, or every triggered alert that matches (docs/features/budgets-and-alerts.md). */
export const AcknowledgeIdsBody = z.strictObject({
  ids: z
    .array(z.string('ids must be alert ids.').check(z.refine((id: string) => isId('alert', id), 'Each id must be an alert id (alt_ + ULID).')), 'ids must be a list of alert ids.')
    .check(z.minLength(1, 'ids must name at least one alert.'), z.maxLength(MAX_ACKNOWLEDGE_IDS, `ids may name at most ${MAX_ACKNOWLEDGE_IDS} alerts.`)),
});
export const AcknowledgeAllBody = z.strictObject({
  all: z.literal(true, 'all must be true.'),
  type: z.optional(z.enum(ALERT_TYPES, TYPE_MESSAGE)),
  keyHash: z.optional(KeyHashFilter),
});
export const AcknowledgeBody = z.union([AcknowledgeIdsBody, AcknowledgeAllBody]);
export type AcknowledgeBody = z.infer<typeof AcknowledgeBody>;
