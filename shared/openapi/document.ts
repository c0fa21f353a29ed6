/**
 * The OpenAPI 3.1 document, generated from the route table and the SAME zod schemas the handlers validate
 * requests with (zod 4's own JSON Schema output: JSON Schema 2020-12 is OpenAPI 3.1's schema dialect).
 *
 * `operations` below is the one hand-written part: per handler, the schemas it declares in `httpHandler({...})`,
 * its success status and response component, and the errors it can answer beyond the ones every route of its
 * kind can (test/unit/openapi.test.ts checks that every route has an entry and that each entry names the very
 * schemas its handler file declares).
 */
import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import pkg from '../../package.json' with { type: 'json' };
import { API_PREFIX, routeId, routes as routeTable, type AuthKind, type Route } from '#shared/routes.ts';
import { PROBLEM_CONTENT_TYPE } from '#shared/http/problem.ts';
import { MAX_BODY_BYTES } from '#shared/http/body.ts';
import { DEFAULT_LIMIT, LIMIT_DOCUMENTED, LimitValue } from '#shared/http/pagination.ts';
import {
  ChangePasswordBody,
  ForgotPasswordBody,
  LoginBody,
  PatchMeBody,
  RefreshBody,
  RegisterBody,
  ResetPasswordBody,
  VerifyEmailBody,
} from '#shared/auth/schemas.ts';
import { CreateIngestKeyBody, IngestKeyParams } from '#shared/ingest-keys/schemas.ts';
import { IngestBody, IngestEvent, MAX_EVENTS } from '#shared/ingest/schemas.ts';
import { KeyBreakdownQuery, KeyParams, LabelBody, ListKeysQuery } from '#shared/keys/schemas.ts';
import { ProjectParams, ProjectTagsBody } from '#shared/tags/schemas.ts';
import { BudgetParams, CreateBudgetBody, PatchBudgetBody } from '#shared/budgets/schemas.ts';
import { ListActionsQuery } from '#shared/enforcement/schemas.ts';
import {
  Channels as RequestChannels,
  CostThresholdConfig as CostThresholdConfigBody,
  CostThresholdRuleBody,
  CreateRuleBody,
  NewKeyConfig as NewKeyConfigBody,
  NewKeyRuleBody,
  PatchRuleBody,
  RuleParams,
  SpendSpikeConfig as SpendSpikeConfigBody,
  SpendSpikeRuleBody,
  SpendAnomalyConfig as SpendAnomalyConfigBody,
  SpendAnomalyRuleBody,
} from '#shared/rules/schemas.ts';
import { AcknowledgeAllBody, AcknowledgeBody, AcknowledgeIdsBody, AlertParams, ListAlertsQuery } from '#shared/alerts/schemas.ts';
import { CheckoutBody } from '#shared/billing/schemas.ts';
import { ListUsersQuery, PatchUserBody, UserParams } from '#shared/users/schemas.ts';
import { AcceptInvitationBody, CreateInvitationBody, InvitationParams, InvitationQuery, ListInvitationsQuery } from '#shared/invitations/schemas.ts';
import { CreateExportBody, CustomersQuery, ExportParams, ExportQuery, SpendQuery } from '#shared/spend/schemas.ts';
import { PriceParams, PutPriceBody } from '#shared/prices/schemas.ts';
import { ConnectionParams, CreateConnectionBody, PatchConnectionBody, ReconciliationQuery } from '#shared/connections/schemas.ts';
import { CloseMonthBody, MonthParams, MonthsQuery } from '#shared/months/schemas.ts';
import {
  AlertId,
  BudgetId,
  ExportId,
  ConnectionId,
  IngestKeyId,
  InvitationId,
  KeyHash,
  responseComponents,
  RuleId,
  UNIQUE_ITEMS,
  UserId,
  type ResponseComponent,
} from '#shared/openapi/responses.ts';
import { ERROR_EXAMPLES, REQUEST_EXAMPLES, RESPONSE_EXAMPLES } from '#shared/openapi/examples.ts';

export const API_TITLE = 'Burnrate API';
export const API_VERSION: string = pkg.version;

export type JsonSchema = Record<string, unknown>;
type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 502 | 503;

/**
 * Stripe's event envelope, for the document only: the webhook handler declares no body schema (it verifies the
 * signature over the raw bytes first, then reads the event Stripe's SDK parsed).
 */
const StripeEventDoc = z.looseObject({
  id: z.string(),
  object: z.literal('event'),
  type: z.string(),
  created: z.int(),
  data: z.looseObject({ object: z.looseObject({}) }),
});

/** Request body components: the handlers' own schemas (`extra` adds what a refinement checks and JSON Schema cannot say). */
const requestComponents: Record<string, { schema: $ZodType; extra?: JsonSchema }> = {
  RegisterRequest: { schema: RegisterBody },
  LoginRequest: { schema: LoginBody },
  RefreshRequest: { schema: RefreshBody },
  PatchMeRequest: { schema: PatchMeBody, extra: { minProperties: 1, description: 'At least one field.' } },
  VerifyEmailRequest: { schema: VerifyEmailBody, extra: { description: 'The `token` of the link `<appUrl>/verify-email?token=<token>`.' } },
  ForgotPasswordRequest: { schema: ForgotPasswordBody },
  ResetPasswordRequest: {
    schema: ResetPasswordBody,
    extra: { description: 'The `token` of the link `<appUrl>/reset-password?token=<token>`; `password` follows register’s rules.' },
  },
  ChangePasswordRequest: { schema: ChangePasswordBody },
  CreateIngestKeyRequest: { schema: CreateIngestKeyBody },
  PutPriceRequest: { schema: PutPriceBody },
  CreateExportRequest: {
    schema: CreateExportBody,
    extra: { description: 'The range, as `GET /spend`: default the current month to today (UTC), at most 366 days.' },
  },
  CloseMonthRequest: { schema: CloseMonthBody, extra: { description: '`force: true` closes a month whose days are not all settled: their estimates are frozen.' } },
  IngestRequest: { schema: IngestBody },
  IngestEvent: {
    schema: IngestEvent,
    extra: {
      description:
        'One provider call. Each event is checked on its own: an invalid one is reported in `rejected` of the 200 answer ' +
        '(it does not fail the batch). `provider` and `model` are trimmed and lower-cased first; `costUsd` has at most 6 ' +
        'decimals; `cachedInputTokens` (cache reads), `cacheWriteInputTokens` (5-minute cache writes) and `cacheWrite1hInputTokens` ' +
        '(1-hour cache writes) are parts of `inputTokens`, together at most `inputTokens`, each priced at its own rate; ' +
        '`serviceTier` (default `standard`) prices the call at its tier’s price; `webSearchRequests` (and `webFetchRequests`) are ' +
        'priced per 1,000 from the price table; a bad value rejects that event (`invalid_event`), not the batch; ' +
        '`timestamp` at most 5 minutes ahead and 35 days old. A string ' +
        'that is not well-formed Unicode (a lone surrogate) anywhere in the body fails the whole request (400).',
    },
  },
  LabelRequest: { schema: LabelBody, extra: { minProperties: 1, description: 'label, tags or both.' } },
  ProjectTagsRequest: { schema: ProjectTagsBody },
  CreateBudgetRequest: {
    schema: CreateBudgetBody,
    extra: {
      description:
        'Money: at most 6 decimals; alertThreshold: at most 2. `keyHash` is required with scope KEY and refused otherwise; `connectionId` and ' +
        '`projectId` are required with scope PROJECT and refused otherwise. `action: stop` needs a lever (400 naming why not and what would work).',
    },
  },
  PatchBudgetRequest: { schema: PatchBudgetBody, extra: { minProperties: 1, description: 'At least one field; the merged budget is checked as a whole.' } },
  CostThresholdRuleRequest: { schema: CostThresholdRuleBody },
  NewKeyRuleRequest: { schema: NewKeyRuleBody, extra: { description: '`config` may be left out: new_key has nothing to configure.' } },
  SpendSpikeRuleRequest: { schema: SpendSpikeRuleBody },
  SpendAnomalyRuleRequest: {
    schema: SpendAnomalyRuleBody,
    extra: {
      description:
        'Every key of the account: its spend of the last hour against its average hourly spend over its last 14 complete days. At or past ' +
        '`minUsdPerHour` and `multiplier` × that average: alert `spend_anomaly` (once per key per UTC day); with `action: stop` the key is ' +
        'stopped at once (Anthropic and OpenRouter key switches, the reporter\'s block) until a person releases it (POST /keys/{hash}/release).',
    },
  },
  CostThresholdConfigRequest: { schema: CostThresholdConfigBody },
  NewKeyConfigRequest: { schema: NewKeyConfigBody },
  SpendSpikeConfigRequest: { schema: SpendSpikeConfigBody },
  SpendAnomalyConfigRequest: { schema: SpendAnomalyConfigBody },
  CreateRuleRequest: {
    schema: CreateRuleBody,
    extra: { description: '`config.webhookUrl` (https, a public host) is required when `channels` includes `webhook`, and refused otherwise. Channels do not repeat.' },
  },
  PatchRuleRequest: {
    schema: PatchRuleBody,
    extra: { minProperties: 1, description: 'At least one field. A `config` replaces the stored one and is checked against the rule’s type. The type cannot be changed (400).' },
  },
  CheckoutRequest: { schema: CheckoutBody },
  PatchUserRequest: { schema: PatchUserBody },
  CreateInvitationRequest: { schema: CreateInvitationBody },
  AcceptInvitationRequest: { schema: AcceptInvitationBody, extra: { description: 'The password rules of register apply.' } },
  AcknowledgeRequest: { schema: AcknowledgeBody },
  AcknowledgeIdsRequest: { schema: AcknowledgeIdsBody },
  AcknowledgeAllRequest: { schema: AcknowledgeAllBody },
  StripeEvent: { schema: StripeEventDoc, extra: { description: 'A Stripe event, exactly as Stripe signed it.' } },
  CreateConnectionRequest: {
    schema: CreateConnectionBody,
    extra: { description: 'An organization admin key: OpenAI `sk-admin-…`, Anthropic `sk-ant-admin…` (read-only scopes are enough).' },
  },
  PatchConnectionRequest: { schema: PatchConnectionBody, extra: { minProperties: 1, description: 'At least one field. A new `adminKey` is checked as on create.' } },
};

export interface OperationSpec {
  summary: string;
  /** The schemas the handler declares in `httpHandler({...})`. */
  body?: $ZodType;
  query?: $ZodType;
  params?: $ZodType;
  /** The body may be left out (`optionalBody` in the handler). */
  bodyOptional?: true;
  /** A documented body the handler does not parse with a schema (the Stripe webhook). */
  rawBody?: $ZodType;
  status: 200 | 201 | 202 | 204;
  response?: ResponseComponent;
  /** The success answer's media type when it is not JSON (its component then describes that text). */
  mediaType?: 'text/csv';
  /** Headers of the success answer worth knowing. */
  headers?: Record<string, string>;
  /** Errors beyond those of every route of its kind (see `errorStatuses`). */
  errors?: ErrorStatus[];
  description?: string;
}

/** One entry per handler of the route table. */
export const operations: Record<string, OperationSpec> = {
  'health/get': { summary: 'Liveness: 200 once every service is ready.', status: 200, response: 'Health' },
  'openapi/get': {
    summary: 'This OpenAPI 3.1 document.',
    status: 200,
    response: 'OpenApiDocument',
  },
  'auth/register': {
    summary: 'Create an account and its first user; signs in.',
    body: RegisterBody,
    status: 201,
    response: 'AuthSession',
    errors: [409],
    description:
      'Email is trimmed and lower-cased. Password: 8+ characters with an upper-case letter, a lower-case letter and a digit. ' +
      'An email already registered: 409. The address gets one e-mail with a verification link. At most 10 from one source ' +
      'IP an hour: 429 with `Retry-After`.',
  },
  'auth/login': {
    summary: 'Sign in.',
    body: LoginBody,
    status: 200,
    response: 'AuthSession',
    errors: [401],
    description:
      '`email` is an e-mail address (a Cognito `sub` or another username: 400). At most 10 failed sign-ins of one e-mail from one ' +
      'source IP in 15 minutes: then 429 with `Retry-After`. A sign-in that overlaps a password reset or change of the user: 401.',
  },
  'auth/refresh': {
    summary: 'A new ID token from a refresh token.',
    body: RefreshBody,
    status: 200,
    response: 'RefreshedToken',
    errors: [401],
    description: 'A refresh token of a session that ended (a password reset or change) or of a removed user: 401.',
  },
  'auth/me': { summary: 'The current user and account.', status: 200, response: 'Me', errors: [404] },
  'auth/update-me': {
    summary: 'Change your own names or whether you get alert e-mail.',
    body: PatchMeBody,
    status: 200,
    response: 'Me',
    errors: [404],
    description: 'At least one of `firstName`, `lastName`, `alertEmails`; answers like GET /auth/me.',
  },
  'auth/verify-email': {
    summary: 'Prove your e-mail address with the token of the link register sent.',
    body: VerifyEmailBody,
    status: 200,
    response: 'EmailVerified',
    description: 'An unknown, used or expired token: 400 `/problems/invalid-token`. The link works once and for 24 hours.',
  },
  'auth/resend-verification': {
    summary: 'Send the verification link again.',
    status: 202,
    errors: [409],
    description: 'Already verified: 409. At most 1 a minute and 5 a day per user: 429 with `Retry-After` (seconds).',
  },
  'auth/forgot-password': {
    summary: 'E-mail a password reset link (valid 1 hour) to the address, if it has a user.',
    body: ForgotPasswordBody,
    status: 202,
    description:
      '202 whether or not the address is known (no enumeration; both answer at the same floor). At most 10 a source IP ' +
      'an hour: 429 with `Retry-After`.',
  },
  'auth/reset-password': {
    summary: 'Set a new password with the token of a reset link; every session of the user ends.',
    body: ResetPasswordBody,
    status: 204,
    description:
      'An unknown, used or expired token: 400 `/problems/invalid-token`. The password rules of register apply (400). ' +
      'The address counts as verified afterwards. Sign in again with the new password.',
  },
  'auth/change-password': {
    summary: 'Change your password; your other sessions end.',
    body: ChangePasswordBody,
    status: 204,
    description:
      'A wrong `currentPassword`: 400 with `errors[].path` `currentPassword` (it counts as a failed sign-in). The ID token ' +
      'of this request stays valid until it expires; every refresh token ends, this session’s too: sign in again with the ' +
      'new password for a new one.',
  },
  'ingest-keys/create': {
    summary: 'Create an ingest key; the secret `key` is shown only in this answer.',
    body: CreateIngestKeyBody,
    bodyOptional: true,
    status: 201,
    response: 'CreatedIngestKey',
    errors: [409],
  },
  'ingest-keys/list': { summary: 'The account’s ingest keys, without secrets.', status: 200, response: 'IngestKeyList' },
  'ingest-keys/delete': { summary: 'Revoke an ingest key at once.', params: IngestKeyParams, status: 204, errors: [404] },
  'ingest/post': {
    summary: `Report 1–${MAX_EVENTS} provider calls (≤ ${MAX_BODY_BYTES} bytes).`,
    body: IngestBody,
    status: 200,
    response: 'IngestResult',
    description: 'Idempotent per `requestId`: a repeat counts as a duplicate. One bad event does not sink the batch: it is listed in `rejected`.',
  },
  'keys/list': {
    summary: 'The account’s keys: search, filters, and any sort across the whole account, with the number that match.',
    query: ListKeysQuery,
    status: 200,
    response: 'KeyList',
    description:
      '`q` (1–100 characters) matches, in any case, a part of the label, the provider’s name of the key or the hint, or the start of ' +
      'the hash. `provider` and `source` filter. `sort`: `monthToDate` (default), `today`, `total`, `forecastMonthEnd`, `lastSeenAt`, ' +
      '`name` (the label, else the provider’s name, else the hint, else the hash; in any case); ties by hash. `order` defaults to ' +
      '`desc` (`asc` for `name`). `total` counts every key that matches; pages follow the chosen order across the whole account. ' +
      'A cursor belongs to its sort and order (another’s: 400).',
  },
  'keys/get': {
    summary: 'One key with its daily and per-model spend breakdown.',
    params: KeyParams,
    query: KeyBreakdownQuery,
    status: 200,
    response: 'KeyDetail',
    errors: [404],
    description: 'Default range: the first day of the current month to today (UTC), at most 366 days; every day appears in `daily`. Dates lie in 2000-01-01…2099-12-31.',
  },
  'spend/get': {
    summary: 'The account’s spend of a range by day, model, provider or key, with totals and the month-end forecast.',
    query: SpendQuery,
    status: 200,
    response: 'Spend',
    description:
      'Range as `GET /keys/{hash}` (default: the current month to today, UTC; at most 366 days). `groupBy=day` (default) lists every day, ' +
      'zeros included; `model` and `provider` most cost first; `key` the 100 keys that spent most in the range. `forecast` is null unless ' +
      '`to` is in the current month: month-to-date + the average of the 7 complete UTC days before today × the days left. ' +
      'Filters: `provider`, `model` (needs `provider`: 400 without it), `keyHash`; every sum, group and the forecast are then those of ' +
      'the filtered spend. `compare=previous` adds `previous: {from, to, total}`: the range of the same length just before, or for a ' +
      'range from the 1st of a month within that month, the same days of the previous month (a whole month: the whole previous month). ' +
      '`groupBy=tag&tag=<name>`: by each key’s effective value of the tag (null: untagged keys and usage without a key), most cost ' +
      'first; with `shared=allocate` the null group’s spend is allocated to the values in proportion to their own (largest remainder, ' +
      'exact to the micro-dollar: `directUsd` + `sharedUsd` = `costUsd`, groups sum to the total). `tagFilter=name:value` narrows every ' +
      'figure to the keys whose effective tags hold it. `groupBy=customer|feature` (whole calendar months): the 100 that spent most, ' +
      '`others` (the rest), null (spend that names none); `customer=` / `feature=` narrow those groupings to one.',
  },
  'spend/export': {
    summary: 'The account’s spend of a range as CSV: one row per key × day × model with activity, days ascending.',
    query: ExportQuery,
    status: 200,
    response: 'SpendCsv',
    mediaType: 'text/csv',
    headers: { 'content-disposition': '`attachment; filename="burnrate-spend-<from>-to-<to>.csv"`' },
    description:
      'Header `date,key_hash,key_label,key_name,project_id,project_name,settled,correction,tags,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd` ' +
      '(`settled` as `GET /spend?groupBy=day` says for the row\'s connection and day, Anthropic Priority Tier on rows `<model> (priority)` of their own, never settled; ' +
      '`tags` the key\'s effective tags as a JSON object); RFC 4180 ' +
      '(CRLF, quoted fields); a text field starting with `=`, `+`, `-`, `@`, tab or CR, or containing `;`, `,`, `"`, CR or LF, is quoted, ' +
      'and a `\'` goes before a leading `=`, `+`, `-`, `@`, tab or CR and before each `=`, `+`, `-`, `@` after a `;` or `,` (formula injection). ' +
      'Range as `GET /spend`, at most 92 days and 25,000 rows: past either, 400 `/problems/export-too-large` saying how to narrow it ' +
      'or naming the asynchronous `POST /spend/exports`.',
  },
  'spend/exports-create': {
    summary: 'Start an asynchronous export of a range (up to 366 days, any number of rows) as a gzip CSV file.',
    body: CreateExportBody,
    bodyOptional: true,
    status: 202,
    response: 'SpendExport',
    errors: [429],
    headers: { location: '`/api/spend/exports/{id}`: poll it until `status` is `ready` (or `failed`).' },
    description:
      'The rows, header and quoting of `GET /spend/export`, built off the request path; with `format: "focus"` the same rows as a ' +
      'FOCUS 1.2 cost-and-usage CSV, one row per UTC day × key × price line (`SkuId` `<provider>/<model>`, `SkuPriceId` ' +
      '`<provider>/<model>/<line>[/<tier>]`, `PricingUnit`/`PricingQuantity`, `ListUnitPrice` the built-in table\'s, `ContractedUnitPrice` the account\'s own, ' +
      '`BilledCost` what Burnrate counts, `BillingAccountId` the provider organization, `ResourceId` the key hash (null without a key), `Tags` the key\'s tags, ' +
      'Burnrate\'s facts in `x_` columns) for FinOps tools. Range as `GET /spend` (at most 366 days: ' +
      'past it 400 with `errors[].path` `from`). At most 2 running exports per account: a third is refused with 429 ' +
      '`/problems/too-many-exports` and `Retry-After` (seconds). The file is kept 24 hours.',
  },
  'spend/exports-get': {
    summary: 'An asynchronous export: its status, and once ready a download link of its gzip CSV file.',
    params: ExportParams,
    status: 200,
    response: 'SpendExport',
    errors: [404],
    description:
      'Once `ready`, `url` downloads `burnrate-spend-<from>-to-<to>.csv.gz` (`application/gzip`; decompressed, exactly the CSV of ' +
      '`GET /spend/export`; a FOCUS export: `burnrate-focus-<from>-to-<to>.csv.gz`) until `expiresAt`, 1 hour; each GET gives a new link. In AWS it is an S3 pre-signed URL; locally a ' +
      'one-time link (a second download answers 410). Another account’s export id: 404.',
  },
  'prices/list': {
    summary: 'Prices in dollars per million tokens: the built-in table with the account’s own prices over it.',
    status: 200,
    response: 'PriceList',
    description:
      'A built-in row names the provider page it was transcribed from (`sourceUrl`) and the day it was checked (`checkedAt`); an own price has ' +
      'null there. Cost of a call = (input − cached − cache writes) × `input` + cached × `cachedInput` + 5-minute writes × `cacheWrite` + ' +
      '1-hour writes × `cacheWrite1h` + output × `output`, exact to the micro-dollar (rounded half-up once), at the rates of the call’s tier: ' +
      '`tiers.<tier>` where named, else batch at half, OpenAI flex at half (Batch API rates), and any other tier at the standard rates ' +
      'with its requests counted in `unpricedRequests`. A call past `longContext.aboveInputTokens` input tokens is priced at the `longContext` ' +
      'rates (every token of it; batch at half of them), as is a connection’s usage the provider reports in its long-context window.',
  },
  'prices/put': {
    summary: 'Set the account’s own price of a model (events ingested from then on use it).',
    params: PriceParams,
    body: PutPriceBody,
    status: 200,
    response: 'Price',
    errors: [404, 409],
    description:
      'Names are trimmed and lower-cased. `cachedInput`, `cacheWrite` (5-minute cache writes) and `cacheWrite1h` (1-hour cache writes) default to `input`. ' +
      '`tiers` sets the rates of `batch`, `flex` and `priority` (e.g. an Anthropic Priority Tier commitment); a tier left out follows the rules of GET /prices. ' +
      '`longContext` sets the rates of a call past `aboveInputTokens` input tokens (its cache writes default to its `input`); left out, every call is priced at the standard rates. ' +
      'A dated model name (`gpt-4o-2024-08-06`) falls back to the ' +
      'account’s price of its family (`gpt-4o`) before the built-in one. Nothing already counted is repriced. At most 200 own prices (409).',
  },
  'connections/create': {
    summary: 'Connect a provider organization with an admin key (read-only is enough).',
    body: CreateConnectionBody,
    status: 201,
    response: 'Connection',
    errors: [409, 502],
    description:
      'One read call checks the key with the provider first. Not shaped like an admin key (an inference key is named as such): 400 with ' +
      '`errors[].path` `adminKey`. The provider refuses it: 400 `/problems/connection-refused` with its words. The provider cannot be ' +
      'reached or answers 5xx, or its answer passes a bound (a body over 32 MB, a list past 1,000 pages or 100,000 items, a repeated page cursor; `detail` names it): 502 `/problems/provider-unavailable`; nothing is stored. One connection per provider: 409. The admin key is ' +
      'never returned, logged or echoed; the first sync is queued at once and imports from the first day of the previous UTC month.',
  },
  'connections/list': { summary: 'The account’s provider connections.', status: 200, response: 'ConnectionList' },
  'connections/get': { summary: 'One connection.', params: ConnectionParams, status: 200, response: 'Connection', errors: [404] },
  'connections/update': {
    summary: 'Rename, rotate the admin key, pause or resume.',
    params: ConnectionParams,
    body: PatchConnectionBody,
    status: 200,
    response: 'Connection',
    errors: [404, 409, 502],
    description:
      'A new `adminKey` is checked as on create and must be proven to belong to the same organization (the organization id where the provider names one, else shared projects (OpenAI) or keys (OpenRouter)): ' +
      'a key of another organization answers 400 `/problems/validation-error`; an organization without projects or keys can\'t be proven: 400 `/problems/organization-unproven` (delete and reconnect instead). ' +
      'Paused connections are not synced; resuming (or a new key for one in error) queues a sync.',
  },
  'connections/delete': {
    summary: 'Disconnect: the stored admin key is destroyed; imported spend and keys stay.',
    params: ConnectionParams,
    status: 204,
    errors: [404],
  },
  'connections/sync': {
    summary: 'Sync now (queued).',
    params: ConnectionParams,
    status: 202,
    response: 'SyncQueued',
    errors: [404, 409, 429],
    description: 'At most once a minute per connection: 429 with `Retry-After`. A paused connection: 409.',
  },
  'connections/reconciliation': {
    summary: 'Per UTC day: what Burnrate computed for the connection’s keys next to what the provider bills.',
    params: ConnectionParams,
    query: ReconciliationQuery,
    status: 200,
    response: 'Reconciliation',
    errors: [404],
    description: 'Range rules as `GET /spend`, at most 92 days. `billedUsd` is null where the provider has no figure yet.',
  },
  'months/list': {
    summary: 'The months of a range (default: the last 12; at most 36), open or closed, and how far each connection has settled each.',
    query: MonthsQuery,
    status: 200,
    response: 'MonthList',
    description:
      'A closed month never changes: `GET /spend`, keys’ breakdowns and exports answer the same figures for its days forever. A later ' +
      'revision of one of its days’ bills is booked as a correction on the day it was found (`correction: true`). A past month that every ' +
      'connection has settled closes by itself at the next sync (`closedBy: "burnrate"`).',
  },
  'months/close': {
    summary: 'Close a past month (admin): its figures are frozen; later bill revisions become corrections on the day they are found.',
    params: MonthParams,
    body: CloseMonthBody,
    bodyOptional: true,
    status: 200,
    response: 'Month',
    errors: [409],
    description:
      '409 `month-open` for the current month (or a later one), `month-closed` for a month closed already, and `month-not-settled` ' +
      'while a connection has days of it its provider has not billed, unless `{"force": true}` (their estimates are then frozen).',
  },
  'prices/delete': { summary: 'Delete the account’s own price (back to the built-in one, or unpriced).', params: PriceParams, status: 204, errors: [404] },
  'keys/incident': {
    summary: 'A key against its usual rate: its spend hour by hour over the last 24 hours, its rate and baseline, and the spend-anomaly holds of it.',
    params: KeyParams,
    status: 200,
    response: 'KeyIncident',
    errors: [404],
  },
  'keys/release': {
    summary: 'Release a key that a spend-anomaly rule stopped (member).',
    params: KeyParams,
    status: 200,
    response: 'KeyRelease',
    errors: [404, 409],
    description:
      'Every spend-anomaly hold of the key ends (recorded as the caller\'s act): the reporter lets it through at once; a key switched off at ' +
      'its provider is switched on by a sync queued now, unless a stop budget holds it too (budgets are released by their budgets). ' +
      '409 `not-stopped` when no rule holds the key. The rule does not stop the key again that UTC day.',
  },
  'keys/label': {
    summary: 'Set or clear (null) a key’s label, and/or replace its own tags.',
    params: KeyParams,
    body: LabelBody,
    status: 200,
    response: 'Key',
    errors: [404],
    description:
      '`tags`: at most 20; names 1–64 characters of `a-z 0-9 _ . - : /` (lower case); values 1–256 Unicode characters without control ' +
      'characters; `{}` clears them. The key’s `effectiveTags` (its project’s tags overlaid by its own) follow at once.',
  },
  'customers/list': {
    summary: 'The application’s customers (events’ customerId) with their spend over whole months.',
    query: CustomersQuery,
    status: 200,
    response: 'CustomerList',
    description:
      'Range as `GET /spend`, in whole calendar months (the current month to date counts as whole; otherwise 400). `sort`: `cost` ' +
      '(default, most first) or `name`. Customers past the plan’s monthly limit (FREE 100, GROWTH 10,000, SCALE 100,000) are one ' +
      'entry, `(other customers)`.',
  },
  'projects/list': { summary: 'The projects of the account’s connections (OpenAI projects, Anthropic workspaces) with their tags.', status: 200, response: 'ProjectList' },
  'projects/update': {
    summary: 'Replace a project’s tags; every key of the project (and keys discovered in it later) inherits them.',
    params: ProjectParams,
    body: ProjectTagsBody,
    status: 200,
    response: 'Project',
    errors: [404],
    description: 'Tag rules as `PATCH /keys/{hash}`. A key’s own tag of the same name wins over the project’s.',
  },
  'budgets/list': { summary: 'Every budget with its month-to-date spend.', status: 200, response: 'BudgetList' },
  'budgets/create': { summary: 'Create a budget.', body: CreateBudgetBody, status: 201, response: 'Budget', errors: [409] },
  'budgets/update': {
    summary: 'Update a budget (partial).',
    params: BudgetParams,
    body: PatchBudgetBody,
    status: 200,
    response: 'Budget',
    errors: [404, 409],
  },
  'budgets/delete': { summary: 'Delete a budget (whatever it stopped is released).', params: BudgetParams, status: 204, errors: [404] },
  'budgets/release': {
    summary: 'Release a stop budget for the rest of the month: its levers are undone and held off until the next month.',
    params: BudgetParams,
    status: 200,
    response: 'Budget',
    errors: [404],
    description: 'Keys blocked by the reporter are let through at once; a key or project limit at a provider is undone by a sync queued now.',
  },
  'enforcement/actions': {
    summary: 'Every act of enforcement, newest first (one budget’s with `budgetId`; one provider’s, one result’s).',
    query: ListActionsQuery,
    status: 200,
    response: 'EnforcementActionList',
    errors: [404],
    description:
      'A failed act (`result: failed`) is retried by the next sync. Another account’s `budgetId`: 404. `provider` and `result` filter the ' +
      'list as it is read (500 acts at most per request): a filtered page holds up to `limit` acts, and may hold fewer while ' +
      '`nextCursor` is not null: follow it. A cursor works only with the filters it was given with.',
  },
  'ingest/blocks': {
    summary: 'The keys the reporter refuses now (stop budgets past their limit), and when to read again (≤ 30 s).',
    status: 200,
    response: 'IngestBlocks',
  },
  'alert-rules/list': { summary: 'The alert rules.', status: 200, response: 'RuleList' },
  'alert-rules/create': { summary: 'Create an alert rule.', body: CreateRuleBody, status: 201, response: 'Rule', errors: [409] },
  'alert-rules/update': {
    summary: 'Update an alert rule (partial).',
    params: RuleParams,
    body: PatchRuleBody,
    status: 200,
    response: 'Rule',
    errors: [404, 409],
  },
  'alert-rules/delete': { summary: 'Delete an alert rule.', params: RuleParams, status: 204, errors: [404] },
  'alerts/list': {
    summary: 'Triggered alerts, newest first, with the account’s counts by status.',
    query: ListAlertsQuery,
    status: 200,
    response: 'AlertList',
    description:
      '`type` and `keyHash` (a key the alert names, `keyHash` or among `keyHashes`) filter the list. A filtered page may hold fewer ' +
      'than `limit` alerts while `nextCursor` is not null (the filter reads a bounded number of alerts per request): follow it. ' +
      '`counts` are exact counters over all the account’s alerts, whatever the filters.',
  },
  'alerts/acknowledge-many': {
    summary: 'Acknowledge alerts in bulk: the ids named, or every triggered alert that matches.',
    body: AcknowledgeBody,
    status: 200,
    response: 'AcknowledgeResult',
    description:
      '`{ids: [1–100 alert ids]}` or `{all: true, type?, keyHash?}`. Each triggered alert is acknowledged exactly once, under ' +
      'concurrency too: `acknowledged` counts those this request acknowledged (alerts already acknowledged, or unknown ids, are not ' +
      'counted and are no error).',
  },
  'alerts/acknowledge': {
    summary: 'Acknowledge an alert (a second time keeps the first acknowledgedAt).',
    params: AlertParams,
    status: 200,
    response: 'Alert',
    errors: [404],
  },
  'webhooks/secret': {
    summary: 'The secret webhook deliveries are signed with (created on first use).',
    status: 200,
    response: 'WebhookSecret',
    headers: { 'cache-control': '`no-store`: a secret.' },
    errors: [404],
  },
  'webhooks/rotate': {
    summary: 'Rotate the webhook signing secret; the previous one keeps signing (a second v1) for 24 hours.',
    status: 200,
    response: 'WebhookSecret',
    headers: { 'cache-control': '`no-store`: a secret.' },
    errors: [404, 409],
  },
  'users/list': { summary: 'The account’s users, oldest first.', query: ListUsersQuery, status: 200, response: 'UserList' },
  'users/update': {
    summary: 'Change a user’s role.',
    params: UserParams,
    body: PatchUserBody,
    status: 200,
    response: 'User',
    errors: [404, 409],
    description:
      'Demoting the account’s last admin: 409 `/problems/last-admin`. An admin who stops being one loses its pending ' +
      'invitations (revoked). Concurrent changes of one user are applied one after the other.',
  },
  'users/delete': {
    summary: 'Remove a user: its identity is deleted, its refresh tokens end at once, its tokens are refused within 60 seconds.',
    params: UserParams,
    status: 204,
    errors: [404, 409],
    description:
      'Removing the account’s last admin: 409 `/problems/last-admin`. The address can register again; the pending invitations ' +
      'the user sent are revoked.',
  },
  'invitations/create': {
    summary: 'Invite an address with a role; it gets a link valid for 7 days.',
    body: CreateInvitationBody,
    status: 201,
    response: 'Invitation',
    errors: [409],
    description:
      'Checked in this order, so the answer tells nothing about the address while seats are full: users plus unexpired pending ' +
      'invitations at the plan’s `userLimit`: 429 `/problems/user-limit-reached`; past 20 invitation e-mails of the account ' +
      'or 3 to the address in a day: 429 `/problems/too-many-requests` with `Retry-After`; the address has a user already: 409 ' +
      '`/problems/email-taken`; a pending invitation to it: 409 `/problems/invitation-pending`.',
  },
  'invitations/list': { summary: 'The pending invitations, newest first.', query: ListInvitationsQuery, status: 200, response: 'InvitationList' },
  'invitations/delete': { summary: 'Revoke a pending invitation: its link stops working.', params: InvitationParams, status: 204, errors: [404] },
  'auth/invitation': {
    summary: 'What an invitation link stands for: the inviting company, the address, the role, the expiry (no auth).',
    query: InvitationQuery,
    status: 200,
    response: 'InvitationPreview',
    description:
      'For the invitation page: the company comes from the server, never from the URL. A bad, used, revoked or expired ' +
      'token: 400 `/problems/invalid-token`.',
  },
  'auth/accept-invitation': {
    summary: 'Accept an invitation: a user of the inviting account with the invited role and a verified address.',
    body: AcceptInvitationBody,
    status: 201,
    response: 'AuthSession',
    errors: [409],
    description: 'A bad, used, revoked or expired token — also the link another accept is using at that moment: 400 `/problems/invalid-token`.',
  },
  'billing/status': { summary: 'Plan, billing status and this period’s usage.', status: 200, response: 'BillingStatus', errors: [404] },
  'billing/checkout': {
    summary: 'Start a Stripe Checkout for a paid plan.',
    body: CheckoutBody,
    status: 201,
    response: 'Checkout',
    errors: [404, 409],
    description: 'FREE or an unknown plan: 400. The current plan, or another paid plan while subscribed (change it in the portal): 409.',
  },
  'billing/portal': {
    summary: 'Open Stripe’s customer portal.',
    status: 201,
    response: 'Portal',
    errors: [404, 409],
    description: 'An account without a Stripe customer (it never started a checkout): 409.',
  },
  'billing/webhook': {
    summary: 'Stripe’s webhook (not for clients).',
    rawBody: StripeEventDoc,
    status: 200,
    response: 'WebhookReceipt',
    errors: [400, 413],
    description:
      'The `Stripe-Signature` header must sign the raw body with the endpoint secret within 300 s (400 otherwise). ' +
      'Every event is applied once (a replay answers 200 `duplicate`); an older event never overwrites a newer state. ' +
      'An event created more than 5 minutes in the future: 400 `/problems/invalid-event`, nothing changes; an event without a customer: 200 `ignored`.',
  },
};

// ---- errors -------------------------------------------------------------------------------------------------

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };
const GATEWAY_REF = { $ref: '#/components/schemas/GatewayMessage' };
/** Every answer carries the request id (quote it to support): declared on every response. */
const REQUEST_ID_HEADER = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };

const errorResponses: Record<ErrorStatus, { name: string; response: JsonSchema }> = {
  400: {
    name: 'BadRequest',
    response: problem(
      'The request is malformed or invalid; `errors` lists each invalid field with its path. Every operation refuses an ' +
        'unknown query parameter, and one without a body refuses any body but none or `{}`.',
    ),
  },
  401: {
    name: 'Unauthorized',
    response: problem('Missing or invalid credentials.', {
      gateway: 'API Gateway’s JWT authorizer (in AWS) answers `{"message": "Unauthorized"}` itself.',
      headers: { 'www-authenticate': { description: '`Bearer` or `ApiKey`.', schema: { type: 'string' } } },
    }),
  },
  403: { name: 'Forbidden', response: problem('The caller’s role does not allow this (`/problems/forbidden`); nothing changed.') },
  404: { name: 'NotFound', response: problem('Unknown id, or an id of another account.') },
  409: { name: 'Conflict', response: problem('Conflicts with the current state (a duplicate, a limit, a concurrent edit).') },
  413: {
    name: 'PayloadTooLarge',
    response: problem(`The body is larger than ${MAX_BODY_BYTES} bytes.`, { gateway: 'Past Lambda’s payload limit API Gateway answers itself.' }),
  },
  415: {
    name: 'UnsupportedMediaType',
    response: problem('The body is not `application/json` (a `+json` type is fine): `/problems/unsupported-media-type`.'),
  },
  429: {
    name: 'TooManyRequests',
    response: problem('Throttled.', {
      gateway: 'API Gateway’s stage throttling (in AWS) answers `{"message": "Too Many Requests"}` itself.',
      headers: { 'retry-after': { description: 'Seconds to wait.', schema: { type: 'string' } } },
    }),
  },
  502: {
    name: 'BadGateway',
    response: problem('A provider Burnrate had to ask could not be reached or failed (`/problems/provider-unavailable`); nothing changed.'),
  },
  503: {
    name: 'ServiceUnavailable',
    response: problem('This deployment runs without the feature (billing off): `/problems/billing-off`. Nothing changed.'),
  },
  500: {
    name: 'InternalError',
    response: problem('Something failed on our side; never a stack trace. Quote `instance` to support.', {
      gateway: 'A function that fails outright is answered by API Gateway (`{"message": "Internal Server Error"}`).',
    }),
  },
};

function problem(description: string, options: { gateway?: string; headers?: JsonSchema } = {}): JsonSchema {
  return {
    description: options.gateway ? `${description} ${options.gateway}` : description,
    headers: { ...REQUEST_ID_HEADER, ...options.headers },
    gateway: options.gateway !== undefined,
  };
}

/** What API Gateway itself answers, by status. */
const GATEWAY_MESSAGES: Record<number, string> = {
  401: 'Unauthorized',
  413: 'Request Entity Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

/** The error response components, each with its example (shared/openapi/examples.ts). */
function errorComponents(): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(errorResponses).map(([status, { name, response }]) => {
      const { gateway, ...rest } = response;
      const content: JsonSchema = { [PROBLEM_CONTENT_TYPE]: { schema: PROBLEM_REF, example: ERROR_EXAMPLES[Number(status) as ErrorStatus] } };
      if (gateway) content['application/json'] = { schema: GATEWAY_REF, example: { message: GATEWAY_MESSAGES[Number(status)] ?? 'Internal Server Error' } };
      return [name, { ...rest, content }];
    }),
  );
}

/** The error statuses of an operation: those of its kind of route, then its own. */
export function errorStatuses(route: Route, spec: OperationSpec): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>(spec.errors ?? []);
  // Every operation: an unknown query parameter or a body it does not take (400), a body past the limit (413).
  statuses.add(400);
  statuses.add(413);
  if (spec.body) statuses.add(415);
  if (route.auth === 'jwt' || route.auth === 'ingestKey') statuses.add(401);
  if (route.auth === 'jwt' && route.role !== 'viewer') statuses.add(403);
  if (pathParams(route.path).length > 0) statuses.add(404);
  if (route.stripe) statuses.add(503);
  statuses.add(429);
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

// ---- JSON Schema from zod -----------------------------------------------------------------------------------

const schemaRef = (name: string) => `#/components/schemas/${name}`;

/** Removes what a document-embedded schema must not carry (`$schema`, `$id`); responses: `additionalProperties: false`. */
function clean(value: unknown, openObjects: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => clean(v, openObjects));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$schema' || key === '$id') continue;
    if (openObjects && key === 'additionalProperties' && child === false) continue;
    out[key] = clean(child, openObjects);
  }
  return out;
}

/**
 * What zod cannot say in JSON Schema, said here: `limit` is text in a query string but an integer 1–100 for a client;
 * channels never repeat (a zod refinement) → `uniqueItems`.
 */
function override(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  if (ctx.zodSchema === LimitValue) {
    for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
    Object.assign(ctx.jsonSchema, LIMIT_DOCUMENTED);
  }
  if (ctx.zodSchema === RequestChannels || UNIQUE_ITEMS.has(ctx.zodSchema as $ZodType)) ctx.jsonSchema.uniqueItems = true;
}

/** Named schemas as components (references between them become `$ref: #/components/schemas/<name>`). */
function components(entries: Record<string, $ZodType>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(entries)) registry.add(schema, { id: name });
  const { schemas } = z.toJSONSchema(registry, { io, target: 'draft-2020-12', unrepresentable: 'any', uri: schemaRef, override });
  return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, clean(schema, io === 'output') as JsonSchema]));
}

/** One request schema (query or path parameters) as JSON Schema. */
export function requestJsonSchema(schema: $ZodType): JsonSchema {
  return clean(z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any', override }), false) as JsonSchema;
}

const PARAMETER_DOCS: Record<string, string> = {
  limit: `Page size, 1–100 (default ${DEFAULT_LIMIT}).`,
  userId: 'The user’s id.',
  cursor: 'The `nextCursor` of the previous page (opaque).',
  status: 'Only alerts in this status.',
  q: 'Search: a part of the label, provider name or hint (any case), or the start of the hash.',
  sort: 'What the list is ordered by.',
  order: '`asc` or `desc` (default `desc`; `asc` for `sort=name`).',
  source: 'Only keys of this source.',
  type: 'Only alerts of this type.',
  provider: 'Only this provider (`openai`, `anthropic`, …; any case).',
  model: 'Only this model of `provider`.',
  keyHash: 'Only what concerns this key (its SHA-256, 64 lower-case hex).',
  compare: '`previous`: also the sums of the previous period.',
  groupBy: 'How `groups` is grouped.',
  from: 'First day (UTC) of the breakdown, YYYY-MM-DD.',
  to: 'Last day (UTC) of the breakdown, YYYY-MM-DD.',
  id: 'The resource id.',
  hash: 'The key’s SHA-256 (64 lower-case hex).',
};

/**
 * The ids a path parameter takes, by the handler's params schema. The handlers read any string (a malformed id is
 * an unknown one: 404); the document says what an id looks like, so clients and tools can check before sending.
 */
const PATH_PARAMETER_FORMATS = new Map<$ZodType, Record<string, $ZodType>>([
  [IngestKeyParams, { id: IngestKeyId }],
  [KeyParams, { hash: KeyHash }],
  [BudgetParams, { id: BudgetId }],
  [RuleParams, { id: RuleId }],
  [AlertParams, { id: AlertId }],
  [UserParams, { userId: UserId }],
  [InvitationParams, { id: InvitationId }],
  [ExportParams, { id: ExportId }],
  [ConnectionParams, { id: ConnectionId }],
  [ProjectParams, { connectionId: ConnectionId }],
]);

function parameters(schema: $ZodType, where: 'query' | 'path'): JsonSchema[] {
  const json = requestJsonSchema(schema);
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  const formats = where === 'path' ? PATH_PARAMETER_FORMATS.get(schema) : undefined;
  return Object.entries(properties).map(([name, property]) => {
    const format = formats?.[name];
    // A path parameter is an id (its format from PATH_PARAMETER_FORMATS) or a name its own schema patterns (/prices).
    if (where === 'path' && !format && typeof property.pattern !== 'string') {
      throw new Error(`path parameter ${name}: no id format in PATH_PARAMETER_FORMATS and no pattern of its own`);
    }
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(PARAMETER_DOCS[name] ? { description: PARAMETER_DOCS[name] } : {}),
      schema: format ? requestJsonSchema(format) : property,
    };
  });
}

// ---- the document -------------------------------------------------------------------------------------------

const SECURITY: Record<AuthKind, JsonSchema[]> = {
  jwt: [{ bearerAuth: [] }],
  ingestKey: [{ ingestKey: [] }],
  none: [],
  stripe: [],
};

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

const WHO_MAY_CALL: Record<Exclude<AuthKind, 'jwt'>, string> = {
  none: 'Public: no credentials.',
  ingestKey: 'Authenticated by an ingest key in `x-api-key` (a server reporting usage, not a user).',
  stripe: 'Called by Stripe only, authenticated by the `Stripe-Signature` header.',
};
const ROLES: Record<NonNullable<Route['role']>, string> = {
  viewer: 'any user of the account (viewer, member or admin)',
  member: 'a member or an admin',
  admin: 'an admin',
};

/** Every operation's description: what the spec says, then who may call it (from the route table). */
function describeOperation(route: Route, spec: OperationSpec): string {
  const who =
    route.auth === 'jwt'
      ? `Needs the bearer token of ${ROLES[route.role ?? 'admin']}; another role gets 403 and nothing changes.`
      : WHO_MAY_CALL[route.auth];
  return [spec.description ?? spec.summary, who].join(' ');
}

function exampleOf(examples: Record<string, unknown>, name: string, handler: string): unknown {
  if (!(name in examples)) throw new Error(`${handler}: no example for ${name} in shared/openapi/examples.ts`);
  return examples[name];
}
/** `{param}` names of an API Gateway path. */
export const pathParams = (path: string) => [...path.matchAll(/\{([A-Za-z0-9_]+)\+?\}/g)].map((m) => m[1]!);

function operation(route: Route, spec: OperationSpec, requestNames: Map<$ZodType, string>): JsonSchema {
  const refTo = (schema: $ZodType) => {
    const name = requestNames.get(schema);
    if (!name) throw new Error(`${route.handler}: its request schema is not a named component`);
    return { $ref: schemaRef(name) };
  };
  const params = [
    ...(spec.params ? parameters(spec.params, 'path') : []),
    ...(spec.query ? parameters(spec.query, 'query') : []),
    ...(route.auth === 'stripe'
      ? [{ name: 'stripe-signature', in: 'header', required: true, description: 'Stripe’s signature of the raw body.', schema: { type: 'string' } }]
      : []),
  ];
  const bodySchema = spec.body ?? spec.rawBody;
  const success: JsonSchema =
    spec.response === undefined
      ? { description: 'Done; no content.' }
      : {
          description: spec.summary,
          ...(spec.headers
            ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) }
            : {}),
          content: {
            [spec.mediaType ?? 'application/json']: {
              schema: { $ref: schemaRef(spec.response) },
              example: exampleOf(RESPONSE_EXAMPLES, spec.response, route.handler),
            },
          },
        };
  success.headers = { ...REQUEST_ID_HEADER, ...(success.headers as JsonSchema | undefined) };
  const responses: JsonSchema = { [String(spec.status)]: success };
  for (const status of errorStatuses(route, spec)) {
    responses[String(status)] = { $ref: `#/components/responses/${errorResponses[status].name}` };
  }
  return {
    operationId: lowerFirst(routeId(route)),
    tags: [route.handler.split('/')[0]!],
    summary: spec.summary,
    description: describeOperation(route, spec),
    security: SECURITY[route.auth],
    ...(params.length ? { parameters: params } : {}),
    ...(bodySchema
      ? {
          requestBody: {
            required: !spec.bodyOptional,
            content: {
              'application/json': {
                schema: refTo(bodySchema),
                example: exampleOf(REQUEST_EXAMPLES, requestNames.get(bodySchema)!, route.handler),
              },
            },
          },
        }
      : {}),
    responses,
  };
}

/** The OpenAPI 3.1.0 document of `routes` (default: the route table). Pure; build it once and keep it. */
export function buildOpenApi(routes: readonly Route[] = routeTable): JsonSchema {
  const requests = components(Object.fromEntries(Object.entries(requestComponents).map(([name, { schema }]) => [name, schema])), 'input');
  for (const [name, { extra }] of Object.entries(requestComponents)) Object.assign(requests[name]!, extra);
  // The handler takes `events` as opaque items and checks each one on its own; the document names their shape.
  ((requests.IngestRequest!.properties as Record<string, JsonSchema>).events!).items = { $ref: schemaRef('IngestEvent') };
  const responses = components(responseComponents, 'output');
  const clash = Object.keys(requests).find((name) => name in responses);
  if (clash) throw new Error(`component ${clash} is both a request and a response schema`);

  const requestNames = new Map(Object.entries(requestComponents).map(([name, { schema }]) => [schema, name]));
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const spec = operations[route.handler];
    if (!spec) throw new Error(`no OpenAPI operation for handler ${route.handler}: add it to shared/openapi/document.ts`);
    // Relative to the server URL `/api` (API_PREFIX): the base URL of the API.
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, spec, requestNames);
  }

  const tags = [...new Set(routes.map((route) => route.handler.split('/')[0]!))].map((name) => ({ name }));
  return {
    // No `jsonSchemaDialect`: it only restates OpenAPI 3.1's default, and Prism then validates no body at all.
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: API_VERSION,
      contact: { name: 'Burnrate API' },
      description:
        'Spend tracking for AI provider API keys. JSON in and out; errors are RFC 9457 problem details ' +
        '(`application/problem+json`). Money is US dollars, exact to the micro-dollar; times are ISO 8601 UTC.',
    },
    servers: [{ url: API_PREFIX, description: 'The API under the origin serving this document (its base URL ends in /api).' }],
    tags,
    paths,
    components: {
      schemas: { ...responses, ...requests },
      responses: errorComponents(),
      headers: {
        RequestId: {
          description: 'The request id: quote it to support; problem answers also carry it in `instance`.',
          schema: { type: 'string' },
          example: 'c1a7f4d2-5b1e-4f0a-9a57-2d9e0f1b3c4d',
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The `token` from /auth/register, /auth/login or /auth/refresh.' },
        ingestKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An ingest key (`brk_...`) from POST /ingest-keys.' },
      },
    },
  };
}
