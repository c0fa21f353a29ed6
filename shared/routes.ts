/**
 * The route table: the ONE source read by the CDK stack (infra/) and the local gateway (local/).
 * Paths use API Gateway syntax (`/keys/{hash}`) and are relative to the `/api` prefix.
 */
export type AuthKind =
  /** Cognito ID token in `Authorization: Bearer`, checked by API Gateway's JWT authorizer (locally by the gateway). */
  | 'jwt'
  /** Public. */
  | 'none'
  /** Machine secret in `x-api-key`, checked by the handler. */
  | 'ingestKey'
  /** Stripe-Signature over the raw body, checked by the handler. */
  | 'stripe';

/** DynamoDB actions a function may use on the table (and its indexes): granted exactly, nothing more. */
export type TableAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'ConditionCheckItem'
  | 'BatchWriteItem';

/** Cognito admin actions a function may call on the user pool. */
export type CognitoAction = 'AdminCreateUser' | 'AdminSetUserPassword' | 'AdminDeleteUser' | 'AdminGetUser';

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  /** Handler module under functions/, without extension: `auth/register` → functions/auth/register.ts */
  handler: string;
  auth: AuthKind;
  table: TableAction[];
  cognito?: CognitoAction[];
}

export const API_PREFIX = '/api';

export const routes: readonly Route[] = [
  { method: 'GET', path: '/health', handler: 'health/get', auth: 'none', table: [] },
  {
    method: 'POST',
    path: '/auth/register',
    handler: 'auth/register',
    auth: 'none',
    table: ['PutItem', 'GetItem'],
    cognito: ['AdminCreateUser', 'AdminSetUserPassword', 'AdminDeleteUser', 'AdminGetUser'],
  },
  { method: 'POST', path: '/auth/login', handler: 'auth/login', auth: 'none', table: [] },
  { method: 'POST', path: '/auth/refresh', handler: 'auth/refresh', auth: 'none', table: [] },
  { method: 'GET', path: '/auth/me', handler: 'auth/me', auth: 'jwt', table: ['BatchGetItem', 'GetItem'] },
  // Ingest keys. TransactWriteItems is authorized per action: its Puts need PutItem, its Deletes DeleteItem.
  { method: 'POST', path: '/ingest-keys', handler: 'ingest-keys/create', auth: 'jwt', table: ['Query', 'PutItem'] },
  { method: 'GET', path: '/ingest-keys', handler: 'ingest-keys/list', auth: 'jwt', table: ['Query'] },
  { method: 'DELETE', path: '/ingest-keys/{id}', handler: 'ingest-keys/delete', auth: 'jwt', table: ['GetItem', 'DeleteItem'] },
  // Ingestion: the key lookup (GetItem), its once-a-minute touch and the aggregates (UpdateItem), the
  // exactly-once event items (PutItem), the account and known keys (BatchGetItem).
  { method: 'POST', path: '/ingest', handler: 'ingest/post', auth: 'ingestKey', table: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem'] },
  { method: 'GET', path: '/keys', handler: 'keys/list', auth: 'jwt', table: ['Query'] },
  { method: 'GET', path: '/keys/{hash}', handler: 'keys/get', auth: 'jwt', table: ['GetItem', 'Query'] },
  { method: 'PATCH', path: '/keys/{hash}', handler: 'keys/label', auth: 'jwt', table: ['UpdateItem'] },
  { method: 'GET', path: '/billing/status', handler: 'billing/status', auth: 'jwt', table: ['GetItem'] },
];

/** `auth/register` → `AuthRegister`: a stable, readable logical id for CDK. */
export function routeId(route: Route): string {
  return route.handler
    .split(/[/-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
