import { httpHandler, ok } from '#shared/http/handler.ts';
import { ingestKeyAuth } from '#shared/ingest-keys/auth.ts';
import { ingestBlocks } from '#shared/enforcement/api.ts';

/** GET /ingest/blocks (x-api-key) → 200 {blocked: [{keyHash, budgetId, since}], refreshAfterSeconds}; no valid key: 401. */
export const handler = httpHandler({ auth: ingestKeyAuth }, async ({ auth }) => ok(await ingestBlocks(auth.accountId)));
