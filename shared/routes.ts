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
export type CognitoAction = 'AdminCreateUser' | 'AdminSetUserPassword' | 'AdminDeleteUser' | 'AdminGetUser' | 'AdminUserGlobalSignOut';

/**
 * The least role a `jwt` route needs (docs/features/identity-and-teams.md): `viewer` < `member` < `admin`. Checked for
 * every route in ONE place (shared/access/roles.ts via jwtAuth) against the user's role in our table.
 */
export type RouteRole = 'viewer' | 'member' | 'admin';

export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  /** Handler module under functions/, without extension: `auth/register` → functions/auth/register.ts */
  handler: string;
  auth: AuthKind;
  /** `jwt` routes: the least role that may call it (a route without one is admin-only: fail closed). */
  role?: RouteRole;
  table: TableAction[];
  cognito?: CognitoAction[];
  /** The function hands created alerts to the notifier: it may send to the alerts queue (`ALERTS_QUEUE_URL`). */
  publishesAlerts?: true;
  /** The function calls Stripe: it gets read access to exactly the Stripe secret, and the price ids. */
  stripe?: true;
  /** The function sends account e-mail (verification, reset, invitation links): SES on the one identity, the From and appUrl. */
  sendsEmail?: true;
  /**
   * The function counts per-IP abuse limits: it gets the CloudFront edge secret (`EDGE_SECRET`) that lets it count
   * the viewer's address behind the dashboard's distribution (shared/http/client-ip.ts). No other function gets it.
   */
  clientIp?: true;
  /** The function queues asynchronous spend exports: it may send to the exports queue (`EXPORTS_QUEUE_URL`). */
  queuesExports?: true;
  /**
   * The function signs download links of export files: `EXPORTS_BUCKET`, and s3:GetObject on the bucket's export
   * prefix (a pre-signed URL carries the signer's rights, so the signer needs them).
   */
  signsExportLinks?: true;
  /** The function seals admin keys: `kms:Encrypt` on the connections key (with the encryption context condition). */
  sealsAdminKeys?: true;
  /** The function queues connection syncs (`CONNECTOR_QUEUE_URL`: SQS SendMessage on the sync queue). */
  queuesSyncs?: true;
  /**
   * The function hands what follows new spend to the evaluator (`EVALUATION_QUEUE_URL`: SQS SendMessage on the
   * evaluation queue; shared/alerting/evaluation-queue.ts).
   */
  queuesEvaluations?: true;
}

export const API_PREFIX = '/api';

// Every `jwt` route reads the caller's user (GetItem: existence, sessions, role) in jwtAuth, cached 30 s a container.

export const routes: readonly Route[] = [
  { method: 'GET', path: '/health', handler: 'health/get', auth: 'none', table: [] },
  // Register: the per-IP limit's window (UpdateItem, or PutItem to start one), the e-mail's owner (GetItem), one
  // transaction of account, user, e-mail item and verification token (PutItem); then the verification e-mail.
  {
    method: 'POST',
    path: '/auth/register',
    handler: 'auth/register',
    auth: 'none',
    table: ['PutItem', 'GetItem', 'UpdateItem'],
    cognito: ['AdminCreateUser', 'AdminSetUserPassword', 'AdminDeleteUser', 'AdminGetUser'],
    sendsEmail: true,
    clientIp: true,
  },
  // Login: the failed-login window of (e-mail, IP) (UpdateItem/PutItem), the address's owner and its session epoch
  // before and after the password check (GetItem), a token of the second its sessions ended admitted (UpdateItem).
  { method: 'POST', path: '/auth/login', handler: 'auth/login', auth: 'none', table: ['UpdateItem', 'PutItem', 'GetItem'], clientIp: true },
  // Refresh: the user's session epoch (GetItem) — a refresh token of an ended session is refused; a token of the
  // second its sessions ended admitted (UpdateItem).
  { method: 'POST', path: '/auth/refresh', handler: 'auth/refresh', auth: 'none', table: ['GetItem', 'UpdateItem'] },
  { method: 'GET', path: '/auth/me', handler: 'auth/me', auth: 'jwt', role: 'viewer', table: ['BatchGetItem', 'GetItem'] },
  // Own profile: the user (UpdateItem) and the account (GetItem).
  { method: 'PATCH', path: '/auth/me', handler: 'auth/update-me', auth: 'jwt', role: 'viewer', table: ['GetItem', 'UpdateItem'] },
  // Verify: the token used up, the user's emailVerified set (UpdateItem each).
  { method: 'POST', path: '/auth/verify-email', handler: 'auth/verify-email', auth: 'none', table: ['UpdateItem'] },
  // Resend: the user (GetItem), the per-user windows (UpdateItem/PutItem), the new token (PutItem); the e-mail.
  {
    method: 'POST',
    path: '/auth/resend-verification',
    handler: 'auth/resend-verification',
    auth: 'jwt',
    role: 'viewer',
    table: ['GetItem', 'UpdateItem', 'PutItem'],
    sendsEmail: true,
  },
  // Forgot: the per-IP and per-address windows (UpdateItem/PutItem), the e-mail's owner (GetItem), the token (PutItem).
  { method: 'POST', path: '/auth/forgot-password', handler: 'auth/forgot-password', auth: 'none', table: ['UpdateItem', 'PutItem', 'GetItem'], sendsEmail: true, clientIp: true },
  // Reset: the token used up, the user's reset links claimed, then (after the password is set and Cognito's sign-out)
  // its sessions ended (UpdateItem each).
  {
    method: 'POST',
    path: '/auth/reset-password',
    handler: 'auth/reset-password',
    auth: 'none',
    table: ['UpdateItem'],
    cognito: ['AdminSetUserPassword', 'AdminUserGlobalSignOut'],
  },
  // Change: the user (GetItem), the failed-login window (UpdateItem/PutItem), the other sessions ended (UpdateItem).
  {
    method: 'POST',
    path: '/auth/change-password',
    handler: 'auth/change-password',
    auth: 'jwt',
    role: 'viewer',
    table: ['GetItem', 'UpdateItem', 'PutItem'],
    cognito: ['AdminSetUserPassword', 'AdminUserGlobalSignOut'],
    clientIp: true,
  },
  // Ingest keys. TransactWriteItems is authorized per action: its Puts need PutItem, its Deletes DeleteItem.
  // Creates and deletes of capped kinds (keys, budgets, rules, prices) move the kind's counter in the same transaction
  // (UpdateItem); a missing counter is read (GetItem), counted (Query) and put (PutItem) first (shared/db/caps.ts).
  { method: 'POST', path: '/ingest-keys', handler: 'ingest-keys/create', auth: 'jwt', role: 'admin', table: ['GetItem', 'Query', 'PutItem', 'UpdateItem'] },
  { method: 'GET', path: '/ingest-keys', handler: 'ingest-keys/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'DELETE', path: '/ingest-keys/{id}', handler: 'ingest-keys/delete', auth: 'jwt', role: 'admin', table: ['GetItem', 'DeleteItem', 'UpdateItem', 'Query', 'PutItem'] },
  // Ingestion: the key lookup (GetItem), its once-a-minute touch and the aggregates (UpdateItem), the
  // exactly-once event items (PutItem), the account and known keys (BatchGetItem), closed months and the period's
  // tracked requests (Query). An event of a past month: its write is conditioned on the month staying open
  // (ConditionCheckItem). What follows the spend (alerts, anomaly rules, the stop budgets' pass) goes to the
  // evaluator (SQS; infra: ConnectorEvaluator).
  { method: 'POST', path: '/ingest', handler: 'ingest/post', auth: 'ingestKey', table: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'Query', 'ConditionCheckItem'], queuesEvaluations: true },
  // The reporter's block list: the ingest key (GetItem), the account's enforcement states (Query).
  { method: 'GET', path: '/ingest/blocks', handler: 'ingest/blocks', auth: 'ingestKey', table: ['GetItem', 'UpdateItem', 'Query'] },
  { method: 'GET', path: '/keys', handler: 'keys/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'GET', path: '/keys/{hash}', handler: 'keys/get', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  // Label and tags: the key and its project's tags (GetItem), the key (UpdateItem) with a check that the project's tags
  // are those its effective tags were computed from (ConditionCheckItem, in one transaction); its stoppedBy (Query).
  { method: 'PATCH', path: '/keys/{hash}', handler: 'keys/label', auth: 'jwt', role: 'member', table: ['GetItem', 'UpdateItem', 'ConditionCheckItem', 'Query'] },
  // Projects: the key index and the projects' tags (Query). A change: the connection and the project's tags (GetItem),
  // the project (UpdateItem), then each of its keys' effective tags on the revision read (UpdateItem).
  { method: 'GET', path: '/projects', handler: 'projects/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'PATCH', path: '/projects/{connectionId}/{projectId}', handler: 'projects/update', auth: 'jwt', role: 'member', table: ['GetItem', 'Query', 'UpdateItem'] },
  // A key's incident (spend-anomaly rule): the key (GetItem), its 14 per-day items (BatchGetItem), states and rules (Query).
  { method: 'GET', path: '/keys/{hash}/incident', handler: 'keys/incident', auth: 'jwt', role: 'viewer', table: ['GetItem', 'BatchGetItem', 'Query'] },
  // Releasing a key a spend-anomaly rule stopped: the key (GetItem), the states (Query), conditional state and act
  // writes (PutItem); a sync queued for a key switch at a provider.
  { method: 'POST', path: '/keys/{hash}/release', handler: 'keys/release', auth: 'jwt', role: 'member', table: ['GetItem', 'Query', 'PutItem'], queuesSyncs: true },
  // Budgets: the account's budgets (Query), their spend and the watched key (BatchGetItem via loadSpend), the
  // budget itself (GetItem), conditional whole-item writes (PutItem, DeleteItem).
  { method: 'GET', path: '/budgets', handler: 'budgets/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query', 'BatchGetItem'] },
  // A stop budget's save also reads what it covers (keys, connections, states: Query) and takes the reporter's acts
  // (PutItem), with their alerts; the levers behind admin keys wait for a sync it queues.
  { method: 'POST', path: '/budgets', handler: 'budgets/create', auth: 'jwt', role: 'member', table: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem'], publishesAlerts: true, queuesSyncs: true },
  { method: 'PATCH', path: '/budgets/{id}', handler: 'budgets/update', auth: 'jwt', role: 'member', table: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem'], publishesAlerts: true, queuesSyncs: true },
  { method: 'DELETE', path: '/budgets/{id}', handler: 'budgets/delete', auth: 'jwt', role: 'member', table: ['GetItem', 'BatchGetItem', 'DeleteItem', 'UpdateItem', 'Query', 'PutItem'], publishesAlerts: true, queuesSyncs: true },
  // Release: the budget (GetItem), what it covers (Query, BatchGetItem), each state held (PutItem), acts and alerts.
  { method: 'POST', path: '/budgets/{id}/release', handler: 'budgets/release', auth: 'jwt', role: 'member', table: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem'], publishesAlerts: true, queuesSyncs: true },
  // The record of enforcement: one page (Query; a budget's on gsi1), the budget named (GetItem).
  { method: 'GET', path: '/enforcement-actions', handler: 'enforcement/actions', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  // Alert rules: the list and count (Query), the rule and the watched key (GetItem), whole-item writes.
  { method: 'GET', path: '/alert-rules', handler: 'alert-rules/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'POST', path: '/alert-rules', handler: 'alert-rules/create', auth: 'jwt', role: 'member', table: ['Query', 'GetItem', 'PutItem', 'UpdateItem'] },
  { method: 'PATCH', path: '/alert-rules/{id}', handler: 'alert-rules/update', auth: 'jwt', role: 'member', table: ['GetItem', 'PutItem'] },
  { method: 'DELETE', path: '/alert-rules/{id}', handler: 'alert-rules/delete', auth: 'jwt', role: 'member', table: ['GetItem', 'DeleteItem', 'UpdateItem', 'Query', 'PutItem'] },
  // Alerts: a page (Query, filtered as it reads) and the account's counters (GetItem; an account without counters yet
  // is counted with a Query). Acknowledging moves the alert and the counters in one transaction (UpdateItem); counters
  // missing are counted (Query) and put (PutItem) first (shared/db/alerts.ts); the single route reads the alert back.
  { method: 'GET', path: '/alerts', handler: 'alerts/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'PATCH', path: '/alerts/{id}/acknowledge', handler: 'alerts/acknowledge', auth: 'jwt', role: 'member', table: ['GetItem', 'UpdateItem', 'Query', 'PutItem'] },
  // Bulk: the triggered alerts that match (Query on gsi1), then transactions of 99 alerts and the counters.
  { method: 'POST', path: '/alerts/acknowledge', handler: 'alerts/acknowledge-many', auth: 'jwt', role: 'member', table: ['GetItem', 'UpdateItem', 'Query', 'PutItem'] },
  // The webhook signing secret: read from the account item, created there on first use (if_not_exists).
  { method: 'GET', path: '/webhook-secret', handler: 'webhooks/secret', auth: 'jwt', role: 'admin', table: ['GetItem', 'UpdateItem'] },
  // Rotation: read the current secret (GetItem), swap it conditionally (UpdateItem).
  { method: 'POST', path: '/webhook-secret/rotate', handler: 'webhooks/rotate', auth: 'jwt', role: 'admin', table: ['GetItem', 'UpdateItem'] },
  { method: 'GET', path: '/billing/status', handler: 'billing/status', auth: 'jwt', role: 'viewer', table: ['GetItem'] },
  // Billing. Checkout: the account (GetItem), and on the first checkout the customer link — the account's
  // stripeCustomerId (UpdateItem) with its STRIPECUSTOMER# lookup item (PutItem) in one transaction.
  { method: 'POST', path: '/billing/checkout', handler: 'billing/checkout', auth: 'jwt', role: 'admin', table: ['GetItem', 'UpdateItem', 'PutItem'], stripe: true },
  { method: 'POST', path: '/billing/portal', handler: 'billing/portal', auth: 'jwt', role: 'admin', table: ['GetItem'], stripe: true },
  // Stripe's webhook (no JWT: the handler checks the signature; in AWS also on a Lambda Function URL): the dedupe
  // item and the customer lookup (GetItem); the dedupe item (PutItem) with the account (UpdateItem) in one transaction.
  { method: 'POST', path: '/billing/webhook', handler: 'billing/webhook', auth: 'stripe', table: ['GetItem', 'PutItem', 'UpdateItem'], stripe: true },
  // Users: the list (Query); a role change or removal moves the account's admin/seat counters in the same
  // transaction (UpdateItem; DeleteItem of the user and its e-mail item); removal also deletes the identity. An admin
  // who stops being one loses its pending invitations: the account's pending ones (Query), each revoked in one
  // transaction (UpdateItem of the invitation and the account, DeleteItem of its address item and link token).
  { method: 'GET', path: '/users', handler: 'users/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'PATCH', path: '/users/{userId}', handler: 'users/update', auth: 'jwt', role: 'admin', table: ['GetItem', 'UpdateItem', 'Query', 'DeleteItem'] },
  {
    method: 'DELETE',
    path: '/users/{userId}',
    handler: 'users/delete',
    auth: 'jwt',
    role: 'admin',
    table: ['GetItem', 'UpdateItem', 'DeleteItem', 'Query'],
    cognito: ['AdminDeleteUser'],
  },
  // Invitations: the account and inviter (GetItem), the e-mail caps (UpdateItem/PutItem), the account's pending ones
  // (Query); one transaction puts the invitation, its address item and link token (PutItem), takes a seat
  // (UpdateItem), checks the address has no user and the inviter is an admin (ConditionCheckItem) and settles
  // expired invitations (UpdateItem, DeleteItem).
  {
    method: 'POST',
    path: '/invitations',
    handler: 'invitations/create',
    auth: 'jwt',
    role: 'admin',
    table: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
    sendsEmail: true,
  },
  { method: 'GET', path: '/invitations', handler: 'invitations/list', auth: 'jwt', role: 'admin', table: ['GetItem', 'Query'] },
  { method: 'DELETE', path: '/invitations/{id}', handler: 'invitations/delete', auth: 'jwt', role: 'admin', table: ['GetItem', 'UpdateItem', 'DeleteItem'] },
  // The invitation page: the token (GetItem), the invitation and the inviting account (BatchGetItem).
  { method: 'GET', path: '/auth/invitation', handler: 'auth/invitation', auth: 'none', table: ['GetItem', 'BatchGetItem'] },
  // Accepting: the token, invitation and e-mail item (GetItem); the token claimed (UpdateItem); the identity; one
  // transaction uses the token up, accepts the invitation, writes the user and its e-mail item, counts an admin and
  // drops the invitation's expiry from the account (UpdateItem, PutItem, DeleteItem).
  {
    method: 'POST',
    path: '/auth/accept-invitation',
    handler: 'auth/accept-invitation',
    auth: 'none',
    table: ['GetItem', 'UpdateItem', 'PutItem', 'DeleteItem'],
    cognito: ['AdminCreateUser', 'AdminSetUserPassword', 'AdminDeleteUser', 'AdminGetUser'],
  },
  // Spend insight: the account's aggregates of a range (Query, pages), its month and recent days and the top keys
  // (BatchGetItem: forecast, labels).
  { method: 'GET', path: '/spend', handler: 'spend/get', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query', 'BatchGetItem'] },
  // Customers: the months' customer items (one Query a month).
  { method: 'GET', path: '/customers', handler: 'customers/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  // The export: its rows (Query on gsi1, pages) and the keys' labels (Query on gsi1).
  { method: 'GET', path: '/spend/export', handler: 'spend/export', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  // Asynchronous exports. Start: the export item with one of the account's 2 slots, the slot conditional (PutItem, in
  // one transaction), then the queue message; a message that can't be sent fails the export at once (UpdateItem) and
  // frees its slot (DeleteItem). Status: the export (GetItem), and once ready a pre-signed link to its file.
  {
    method: 'POST',
    path: '/spend/exports',
    handler: 'spend/exports-create',
    auth: 'jwt',
    role: 'member',
    table: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    queuesExports: true,
  },
  { method: 'GET', path: '/spend/exports/{id}', handler: 'spend/exports-get', auth: 'jwt', role: 'viewer', table: ['GetItem'], signsExportLinks: true },
  // Own prices: the list (Query); a set or delete moves the account's `prices` counter in the same transaction
  // (UpdateItem; a missing counter is counted first: Query, PutItem) with the price item (PutItem, DeleteItem).
  { method: 'GET', path: '/prices', handler: 'prices/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'PUT', path: '/prices/{provider}/{model}', handler: 'prices/put', auth: 'jwt', role: 'admin', table: ['GetItem', 'Query', 'PutItem', 'UpdateItem'] },
  { method: 'DELETE', path: '/prices/{provider}/{model}', handler: 'prices/delete', auth: 'jwt', role: 'admin', table: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] },
  // Provider connections. Create: the ONE provider check, then the connection (PutItem) and the account's
  // `connected:<provider>` (UpdateItem) in one transaction; the admin key sealed (KMS Encrypt); the first sync queued.
  { method: 'POST', path: '/connections', handler: 'connections/create', auth: 'jwt', role: 'admin', table: ['GetItem', 'PutItem', 'UpdateItem'], sealsAdminKeys: true, queuesSyncs: true },
  { method: 'GET', path: '/connections', handler: 'connections/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'GET', path: '/connections/{id}', handler: 'connections/get', auth: 'jwt', role: 'viewer', table: ['GetItem'] },
  // Patch: the connection read and replaced conditionally (GetItem, PutItem); a new admin key checked and sealed.
  { method: 'PATCH', path: '/connections/{id}', handler: 'connections/update', auth: 'jwt', role: 'admin', table: ['GetItem', 'PutItem', 'Query'], sealsAdminKeys: true, queuesSyncs: true },
  // Delete: the connection and its lease (DeleteItem) with the account's `connected:<provider>` (UpdateItem).
  { method: 'DELETE', path: '/connections/{id}', handler: 'connections/delete', auth: 'jwt', role: 'admin', table: ['GetItem', 'DeleteItem', 'UpdateItem', 'Query', 'PutItem'], queuesSyncs: true },
  // Sync now: the once-a-minute slot (UpdateItem), then one queue message.
  { method: 'POST', path: '/connections/{id}/sync', handler: 'connections/sync', auth: 'jwt', role: 'admin', table: ['GetItem', 'UpdateItem'], queuesSyncs: true },
  // Reconciliation: the connection (GetItem) and its days of the range (Query).
  { method: 'GET', path: '/connections/{id}/reconciliation', handler: 'connections/reconciliation', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  // Closed months: the account's closed months (Query) and its connections (Query); a close reads the connections
  // (Query) and writes the month once (PutItem, conditioned on it not existing).
  { method: 'GET', path: '/months', handler: 'months/list', auth: 'jwt', role: 'viewer', table: ['GetItem', 'Query'] },
  { method: 'POST', path: '/months/{month}/close', handler: 'months/close', auth: 'jwt', role: 'admin', table: ['GetItem', 'Query', 'PutItem'] },
  { method: 'GET', path: '/openapi.json', handler: 'openapi/get', auth: 'none', table: [] },
];

/** `auth/register` → `AuthRegister`: a stable, readable logical id for CDK. */
/**
 * The least role of every `jwt` route by its routeKey (`METHOD /path`; a route without one: admin, fail closed): what
 * shared/access/roles.ts checks. Written by `npm run gen:api` to shared/access/route-roles.json, which the functions
 * bundle instead of this table (6.8 KB less in each; test/unit/routes.test.ts keeps the file equal to this).
 */
export function jwtRouteRoles(list: readonly Route[] = routes): Record<string, RouteRole> {
  return Object.fromEntries(list.filter((r) => r.auth === 'jwt').map((r) => [`${r.method} ${r.path}`, r.role ?? 'admin']));
}

export function routeId(route: Route): string {
  return route.handler
    .split(/[/-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
