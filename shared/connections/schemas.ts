/** Request schemas of /connections (zod/mini, strict). The admin key's shape is checked by the service (it names inference keys). */
import * as z from 'zod/mini';
import { queryDate } from '#shared/http/dates.ts';
import { name } from '#shared/http/fields.ts';

const Provider = z.enum(['openai', 'anthropic', 'openrouter'], 'provider must be openai, anthropic or openrouter.');
const adminKeyMessage = 'adminKey must be a string of 20–500 characters.';
const AdminKey = z.string(adminKeyMessage).check(z.trim(), z.minLength(20, adminKeyMessage), z.maxLength(500, adminKeyMessage));

export const CreateConnectionBody = z.strictObject({ provider: Provider, adminKey: AdminKey, name: z.optional(name()) });
export type CreateConnectionBody = z.infer<typeof CreateConnectionBody>;

export const PatchConnectionBody = z
  .strictObject({
    name: z.optional(name()),
    adminKey: z.optional(AdminKey),
    status: z.optional(z.enum(['active', 'paused'], 'status must be active or paused.')),
    /** Whether stop budgets may act through this connection's admin key. */
    enforcement: z.optional(z.enum(['on', 'off'], 'enforcement must be on or off.')),
  })
  .check(
    z.refine((patch) => Object.keys(patch).length > 0, {
      error: 'Send at least one field to update.',
      when: (payload) => payload.issues.length === 0,
    }),
  );
export type PatchConnectionBody = z.infer<typeof PatchConnectionBody>;

/** Any string: an id that is not a connection id of this account is a 404, like every other resource's (security.test.ts). */
export const ConnectionParams = z.strictObject({ id: z.string() });

export const ReconciliationQuery = z.strictObject({ from: z.optional(queryDate('from')), to: z.optional(queryDate('to')) });
export type ReconciliationQuery = z.infer<typeof ReconciliationQuery>;
