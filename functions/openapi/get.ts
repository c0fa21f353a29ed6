import { httpHandler, ok } from '#shared/http/handler.ts';
import { buildOpenApi } from '#shared/openapi/document.ts';

/** Built once per container: the document depends only on the code. */
const document = buildOpenApi();

/** GET /openapi.json (no auth) → 200 the OpenAPI 3.1 document, generated from the request schemas the handlers use. */
export const handler = httpHandler({ auth: 'none' }, async () => ok(document));
