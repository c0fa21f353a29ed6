import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { authenticateIngestKey, type IngestPrincipal } from '#shared/ingest-keys/service.ts';

/** The `ingestKey` auth kind of the route table: the account of the `x-api-key` secret, or 401. */
export const ingestKeyAuth = (event: APIGatewayProxyEventV2): Promise<IngestPrincipal> => authenticateIngestKey(event.headers?.['x-api-key']);
