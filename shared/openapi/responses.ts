/**
 * zod/mini schemas of every RESPONSE body, for the OpenAPI document (shared/openapi/document.ts) only: nothing
 * parses responses with them at run time. Each one mirrors a view mapper field for field (names, nullability,
 * enums); test/unit/openapi.test.ts checks at compile time that the mappers' return types and these agree.
 * Plain `z.object`s: the document leaves responses open to additions; the contract test closes them to catch
 * fields the code returns that are not documented.
 */
import * as z from 'zod/mini';
import { ID_PREFIX, type IdKind } from '#shared/ids.ts';
import { ALERT_TYPES } from '#shared/alerting/model.ts';

// ---- building blocks ----------------------------------------------------------------------------------------

/** `values` lists every member of the union `T` (a compile error otherwise), as z.enum wants it. */
const members = <T extends string>(values: Record<T, true>) => Object.keys(values) as [T, ...T[]];

/** ISO 8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
export const Timestamp = z.iso.datetime();
/** A UTC calendar day `YYYY-MM-DD`. */
export const CalendarDate = z.iso.date();
/** US dollars, exact to the micro-dollar. */
export const Usd = z.number().check(z.minimum(0));
const Count = z.int().check(z.minimum(0));

const id = (kind: IdKind) => z.string().check(z.regex(new RegExp(`^${ID_PREFIX[kind]}_[0-9A-HJKMNP-TV-Z]{26}$`)));
export const AccountId = id('account');
export const UserId = id('user');
export const BudgetId = id('budget');
export const RuleId = id('rule');
export const AlertId = id('alert');
export const IngestKeyId = id('ingestKey');
export const InvitationId = id('invitation');
export const ExportId = id('export');
export const ConnectionId = id('connection');
/** A provider key's SHA-256, 64 lower-case hex characters. */
export const KeyHash = z.string().check(z.regex(/^[0-9a-f]{64}$/));

export const Plan = z.enum(members<'FREE' | 'GROWTH' | 'SCALE'>({ FREE: true, GROWTH: true, SCALE: true }));
export const BillingStatusValue = z.enum(
  members<'ACTIVE' | 'TRIALING' | 'PAST_DUE' | 'CANCELED' | 'INCOMPLETE'>({
    ACTIVE: true,
    TRIALING: true,
    PAST_DUE: true,
    CANCELED: true,
    INCOMPLETE: true,
  }),
);

// ---- errors (RFC 9457) --------------------------------------------------------------------------------------

export const FieldError = z.object({
  /** `monthlyLimit`, `events.3.keyHash`, `query.limit`, `path.id`. */
  path: z.string(),
  message: z.string(),
});

export const Problem = z.object({
  type: z.string().check(z.regex(/^\/problems\/[a-z0-9-]+$/)),
  title: z.string(),
  status: z.int().check(z.minimum(400), z.maximum(599)),
  detail: z.optional(z.string()),
  errors: z.optional(z.array(FieldError)),
  /** `/requests/<request id>`: quote it to support. */
  instance: z.optional(z.string()),
});

/** What API Gateway itself answers (in AWS) for a refused JWT, a throttled request or an unknown route. */
export const GatewayMessage = z.object({ message: z.string() });

// ---- lists --------------------------------------------------------------------------------------------------

/** `{items, nextCursor}`: `nextCursor` is null on the last page (always, for lists that are not paginated). */
export const page = <T extends z.core.$ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.nullable(z.string()) });

// ---- auth ---------------------------------------------------------------------------------------------------

/** POST /auth/register (201) and POST /auth/login (200). */
export const AuthSession = z.object({
  accountId: AccountId,
  userId: UserId,
  /** The identity service's ID token (a JWT): `Authorization: Bearer <token>`. */
  token: z.string(),
  refreshToken: z.string(),
  /** Seconds until `token` expires. */
  expiresIn: z.int().check(z.minimum(1)),
});

/** POST /auth/refresh. */
export const RefreshedToken = z.object({ token: z.string(), expiresIn: z.int().check(z.minimum(1)) });

export const Role = z.enum(['admin', 'member', 'viewer']);

export const User = z.object({
  userId: UserId,
  email: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  /** What the user may do (docs/features/identity-and-teams.md). */
  role: Role,
  /** The address was proven by a link sent to it; only verified addresses get alert e-mail. */
  emailVerified: z.boolean(),
  /** The user wants alert e-mail. */
  alertEmails: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const Account = z.object({
  accountId: AccountId,
  companyName: z.string(),
  plan: Plan,
  billingStatus: BillingStatusValue,
  createdAt: Timestamp,
});

/** An invitation to join the account (POST/GET /invitations). */
export const Invitation = z.object({
  id: InvitationId,
  email: z.string(),
  role: Role,
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
  /** The admin who invited (userId). */
  invitedBy: UserId,
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

/** GET /auth/invitation: what the invitation page shows, from the server (never from the URL). */
export const InvitationPreview = z.object({
  /** The inviting account's company name. */
  company: z.string(),
  email: z.string(),
  role: Role,
  expiresAt: Timestamp,
});

/** GET /auth/me, PATCH /auth/me. */
export const Me = z.object({ user: User, account: Account });

/** POST /auth/verify-email. */
export const EmailVerified = z.object({ emailVerified: z.literal(true) });

// ---- ingest keys and ingestion ------------------------------------------------------------------------------

/** A list item of GET /ingest-keys: never the secret. */
export const IngestKey = z.object({
  id: IngestKeyId,
  name: z.string(),
  /** The first characters of the secret, for recognizing it (`brk_` + 8). */
  prefix: z.string().check(z.regex(/^brk_/)),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastUsedAt: z.nullable(Timestamp),
});

/** POST /ingest-keys: the only time the secret `key` is shown. */
export const CreatedIngestKey = z.object({
  id: IngestKeyId,
  name: z.string(),
  key: z.string().check(z.regex(/^brk_[A-Za-z0-9_-]{43}$/)),
  prefix: z.string().check(z.regex(/^brk_/)),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  /**
   * Always null for a new key. Documented as the list's `Timestamp | null`: a property whose type is only `null`
   * disappears from openapi-fetch's response types (its `Readable` helper drops keys whose non-null type is never).
   */
  lastUsedAt: z.nullable(Timestamp),
});

export const RejectCode = z.enum(
  members<'invalid_event' | 'timestamp_in_future' | 'timestamp_too_old' | 'plan_limit_reached' | 'key_limit_reached' | 'amount_out_of_range' | 'provider_connected' | 'unavailable'>({
    invalid_event: true,
    timestamp_in_future: true,
    timestamp_too_old: true,
    plan_limit_reached: true,
    key_limit_reached: true,
    amount_out_of_range: true,
    provider_connected: true,
    unavailable: true,
  }),
);

/** POST /ingest. */
export const IngestResult = z.object({
  accepted: Count,
  duplicates: Count,
  rejected: z.array(z.object({ index: Count, code: RejectCode, message: z.string() })),
});

// ---- keys ---------------------------------------------------------------------------------------------------

/** One holder stopping a key now (`GET /keys`, `GET /keys/{hash}`). */
export const StoppedBy = z.object({
  kind: z.enum(members<'budget' | 'anomaly'>({ budget: true, anomaly: true })),
  /** The budget's or anomaly rule's id. */
  id: z.string(),
  name: z.nullable(z.string()),
  /** `anthropic_key`, `openrouter_key`, `openai_project_limit`, `reporter`, … */
  lever: z.string(),
  since: Timestamp,
});

export const Key = z.object({
  /** Who stops this key now: its switch, its reporter block, its project's cap once reached (empty while it runs). */
  stoppedBy: z.array(StoppedBy),
  hash: KeyHash,
  /** Where the key's spend comes from: events sent to `POST /ingest`, or a provider connection. */
  source: z.enum(members<'ingest' | 'connection'>({ ingest: true, connection: true })),
  label: z.nullable(z.string()),
  hint: z.nullable(z.string()),
  provider: z.string(),
  /** The provider's name of the key (connection keys), else null. */
  name: z.nullable(z.string()),
  providerKeyId: z.nullable(z.string()),
  /** OpenAI project, Anthropic workspace (its default workspace: `Default workspace`); null for an ingest key. */
  project: z.nullable(z.object({ id: z.string(), name: z.string() })),
  providerStatus: z.nullable(z.enum(members<'active' | 'inactive' | 'archived' | 'expired' | 'deleted'>({ active: true, inactive: true, archived: true, expired: true, deleted: true }))),
  /** An OpenRouter key's own credit limit in dollars, as OpenRouter lists it; null when it has none (and for other providers). */
  providerLimitUsd: z.nullable(z.number()),
  firstSeenAt: Timestamp,
  lastSeenAt: Timestamp,
  /** `forecastMonthEnd`: month-to-date + the average of the 7 complete UTC days before today × the days left. */
  /** `month`, `requests.month`: with `GET /keys?month=YYYY-MM` only, that month's figures (corrections booked in it included). */
  spend: z.object({ today: Usd, monthToDate: Usd, total: Usd, forecastMonthEnd: Usd, month: z.optional(z.number()) }),
  requests: z.object({ today: Count, monthToDate: Count, total: Count, month: z.optional(z.int()) }),
  unpricedRequests: Count,
  /** false: a connection's key past the plan's key limit, listed without spend until the plan has room for it. */
  tracked: z.boolean(),
  /** The key's own tags (`PATCH /keys/{hash}`). */
  tags: z.record(z.string(), z.string()),
  /** Its project's tags overlaid by its own: what groupBy=tag, tagFilter, TAG budgets and the exports read. */
  effectiveTags: z.record(z.string(), z.string()),
});

/** GET /customers: one customer of the application (events' `customerId`) with its sums over the range. */
export const Customer = z.object({
  customerId: z.string(),
  costUsd: Usd,
  requests: Count,
  inputTokens: Count,
  outputTokens: Count,
  firstSeenAt: Timestamp,
  lastSeenAt: Timestamp,
});

/** A project of a connection (an OpenAI project, an Anthropic workspace) with its tags and how many keys it has. */
export const Project = z.object({
  connectionId: ConnectionId,
  provider: z.string(),
  id: z.string(),
  name: z.string(),
  tags: z.record(z.string(), z.string()),
  keys: Count,
});

const totals = {
  costUsd: Usd,
  requests: Count,
  inputTokens: Count,
  cachedInputTokens: Count,
  outputTokens: Count,
};

export const Breakdown = z.object({
  from: CalendarDate,
  to: CalendarDate,
  /** Every day of the range, zeros included; `settled`: the provider's bill for the day is in (a connection's key). */
  daily: z.array(z.object({ date: CalendarDate, settled: z.boolean(), ...totals })),
  /** Most spend first. */
  /**
   * Per model, most spend first. A row of units rather than tokens (a connection's OpenAI images, speech,
   * transcription, moderations, vector storage, code interpreter sessions, web and file search calls; its model
   * reads `images:dall-e-3`, `vector_stores`, …) carries its `unit` (`image`, `character`, `second`, `request`,
   * `byte_day`, `session`, `call`) and `quantity`.
   */
  byModel: z.array(
    z.object({
      provider: z.string(),
      model: z.string(),
      ...totals,
      /** A correction's figures are differences: negative where a revision lowered them. */
      costUsd: z.number(),
      requests: z.int(),
      inputTokens: z.int(),
      cachedInputTokens: z.int(),
      outputTokens: z.int(),
      unit: z.optional(z.string()),
      quantity: z.optional(Count),
      /**
       * A correction (docs/features/spend-and-exports.md "Closed months"): a later revision of the bill of `correctionOf`, a day of a closed
       * month, booked in this range on the day it was found (the closed month's figures never change).
       */
      correction: z.optional(z.literal(true)),
      correctionOf: z.optional(CalendarDate),
    }),
  ),
  /**
   * Spend of the range its provider breaks down by model only once the day is complete (OpenRouter's today, from the
   * key's `usage_daily`): in `daily`, in no `byModel` row; 0 when there is none.
   */
  notByModelUsd: Usd,
});

/** GET /keys/{hash}. */
export const KeyDetail = z.extend(Key, { breakdown: Breakdown });

// ---- spend insight ------------------------------------------------------------------------------------------

/** GET /spend: `groups` has the shape of `groupBy`. */
export const Spend = z.object({
  from: CalendarDate,
  to: CalendarDate,
  groupBy: z.enum(['day', 'model', 'provider', 'key', 'project', 'tag', 'customer', 'feature']),
  total: z.object(totals),
  groups: z.array(
    z.union([
      /**
       * groupBy=tag: the tag's effective value (null: keys without it and usage without a key). With shared=allocate,
       * `directUsd` (the value's own), `sharedUsd` (its part of the untagged spend) and `costUsd` = their sum.
       */
      z.object({ value: z.nullable(z.string()), ...totals, directUsd: z.optional(Usd), sharedUsd: z.optional(Usd) }),
      /**
       * groupBy=customer: the 100 customers that spent most, `(other customers)` (customers past the plan's monthly
       * limit), `others` (the rest, `count` of them) and null (spend that names no customer).
       */
      z.object({ customer: z.nullable(z.string()), count: z.optional(Count), ...totals }),
      /** groupBy=feature: as customer; null: spend that names no feature. */
      z.object({ feature: z.nullable(z.string()), count: z.optional(Count), ...totals }),
      /** `settled`: every connection in the query's scope has the provider's bill for the day. */
      z.object({ date: CalendarDate, settled: z.boolean(), ...totals }),
      /** groupBy=model; `model` null: spend its provider breaks down by model only once the day is complete (OpenRouter's today). */
      z.object({ provider: z.string(), model: z.nullable(z.string()), ...totals }),
      /** groupBy=project: an OpenAI project, an Anthropic workspace; null for the provider's keys without one. */
      z.object({ provider: z.string(), project: z.nullable(z.object({ id: z.string(), name: z.string() })), ...totals }),
      z.object({ provider: z.string(), ...totals }),
      z.object({
        hash: KeyHash,
        label: z.nullable(z.string()),
        /** The provider's name of a connection's key (else null): how a key without a label is named. */
        name: z.nullable(z.string()),
        hint: z.nullable(z.string()),
        provider: z.nullable(z.string()),
        ...totals,
      }),
    ]),
  ),
  /** Null unless `to` is in the current month. With filters: the forecast of the filtered spend. */
  forecast: z.nullable(z.object({ monthEnd: Usd, method: z.literal('trailing-7-day-average') })),
  /** With `compare=previous` only: the sums of the previous range (same length just before; a month from its 1st: the same days of the previous month). */
  previous: z.optional(
    z.object({
      from: CalendarDate,
      to: CalendarDate,
      total: z.object(totals),
      /** `history_unavailable` notes of the previous range (days a connection could not import: unknown, not $0). */
      notes: z.array(z.object({ code: z.literal('history_unavailable'), message: z.string(), provider: z.string(), from: CalendarDate, to: CalendarDate })),
    }),
  ),
  /** Whether the figures are whole for the range and filters asked; `complete` is false when a note other than `estimated` applies. */
  coverage: z.object({
    complete: z.boolean(),
    notes: z.array(
      z.object({
        code: z.enum(['plan_customer_limit', 'plan_key_limit', 'plan_request_limit', 'sync_pending', 'sync_failing', 'unpriced', 'estimated', 'history_unavailable']),
        /** What it means and what to do, in words to show. */
        message: z.string(),
        provider: z.optional(z.string()),
        from: z.optional(CalendarDate),
        to: z.optional(CalendarDate),
        count: z.optional(Count),
      }),
    ),
  }),
});

/** An asynchronous export (POST /spend/exports, GET /spend/exports/{id}). */
export const SpendExport = z.object({
  id: ExportId,
  /** `csv` (the columns of GET /spend/export) or `focus` (FOCUS 1.2 cost and usage). */
  format: z.enum(['csv', 'focus']),
  from: CalendarDate,
  to: CalendarDate,
  /** `running` until the worker settles it; a running export whose worker is gone reads `failed` after 20 minutes. */
  status: z.enum(['running', 'ready', 'failed']),
  /** Data rows (the header not counted): written so far while running, all of them once ready. */
  rows: Count,
  /** Size of the gzip file, once ready (0 before). */
  bytes: Count,
  /** A download link valid until `expiresAt` (1 hour, a new one on each GET), while ready and the file is kept (24 hours). */
  url: z.nullable(z.string()),
  expiresAt: z.nullable(Timestamp),
  createdAt: Timestamp,
});

/** One tier's rates, dollars per million tokens. */
const TierRatesView = z.object({ input: Usd, cachedInput: Usd, cacheWrite: Usd, cacheWrite1h: Usd, output: Usd });

/** An entry of GET /prices: dollars per million tokens. */
export const Price = z.object({
  provider: z.string(),
  model: z.string(),
  input: Usd,
  /** Input read from the provider's cache. */
  cachedInput: Usd,
  /** Input written to the cache with the 5-minute lifetime (`input` where the provider charges nothing extra). */
  cacheWrite: Usd,
  /** Input written to the cache with the 1-hour lifetime. */
  cacheWrite1h: Usd,
  output: Usd,
  /**
   * The rates of the tiers the price names (OpenAI's published Priority processing rates, an own price's tiers).
   * A tier not named: batch at half of every rate, flex at the provider's published factor (OpenAI: half), priority
   * and others at the standard rates with their requests counted in `unpricedRequests`.
   */
  tiers: z.object({ batch: z.optional(TierRatesView), flex: z.optional(TierRatesView), priority: z.optional(TierRatesView) }),
  /**
   * The rates of every token of a call past `aboveInputTokens` input tokens (Anthropic Sonnet 4 / 4.5 with the 1M
   * context window), and of an Anthropic connection's usage in its `200k-1M` context window; null: every call at the
   * standard rates.
   */
  longContext: z.nullable(z.object({ aboveInputTokens: z.int(), ...TierRatesView.shape })),
  source: z.enum(['builtin', 'account']),
  /** A built-in row: the provider's page it was transcribed from; an own price: null. */
  sourceUrl: z.nullable(z.string()),
  /** A built-in row: the UTC day it was last checked against `sourceUrl`; an own price: null. */
  checkedAt: z.nullable(CalendarDate),
  updatedAt: Timestamp,
});

// ---- budgets, rules, alerts ---------------------------------------------------------------------------------

export const Budget = z.object({
  id: BudgetId,
  name: z.nullable(z.string()),
  monthlyLimit: Usd,
  /** Percent of monthlyLimit. */
  alertThreshold: z.number(),
  scope: z.enum(members<'ACCOUNT' | 'KEY' | 'PROJECT' | 'TAG'>({ ACCOUNT: true, KEY: true, PROJECT: true, TAG: true })),
  keyHash: z.nullable(KeyHash),
  /** PROJECT budgets: the connection and its OpenAI project or Anthropic workspace. */
  connectionId: z.optional(z.nullable(z.string())),
  projectId: z.optional(z.nullable(z.string())),
  /** scope TAG only: every key whose effective tags hold `name: value`, now and later. */
  tag: z.optional(z.nullable(z.object({ name: z.string(), value: z.string() }))),
  /** `stop`: at the limit, Burnrate pulls the levers of what the budget covers. */
  action: z.enum(members<'notify' | 'stop'>({ notify: true, stop: true })),
  spend: z.object({ monthToDate: Usd }),
  /** Rounded to 2 decimals. */
  percentUsed: z.number().check(z.minimum(0)),
  status: z.enum(members<'ok' | 'warning' | 'exceeded'>({ ok: true, warning: true, exceeded: true })),
  alertOnForecast: z.boolean(),
  /** The month-end forecast of what the budget watches; `percentOfLimit` rounded to 2 decimals. */
  forecast: z.object({ monthEnd: Usd, percentOfLimit: z.number().check(z.minimum(0)) }),
  /** Stop budgets: what enforcement did (the worst of its targets), the lever, a sentence, since when. */
  enforcement: z.optional(
    z.object({
      status: z.enum(members<'armed' | 'stopped' | 'released' | 'failed'>({ armed: true, stopped: true, released: true, failed: true })),
      lever: z.nullable(z.string()),
      detail: z.string(),
      since: Timestamp,
      /** The provider's own cap this budget keeps (OpenAI project limit, OpenRouter key limit, Anthropic workspace limit). */
      nativeCap: z.object({
        status: z.enum(members<'set' | 'unavailable' | 'none'>({ set: true, unavailable: true, none: true })),
        provider: z.nullable(z.string()),
        detail: z.string(),
      }),
    }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** Who holds a lever: a budget, or an anomaly rule. */
export const LeverHolder = z.object({ kind: z.enum(members<'budget' | 'anomaly'>({ budget: true, anomaly: true })), id: z.string() });

/** One act of enforcement (GET /enforcement-actions), one entry per holder it concerns. */
export const EnforcementAction = z.object({
  id: z.string(),
  /** The holder's budget (null for an anomaly rule's act). */
  budgetId: z.nullable(BudgetId),
  holder: LeverHolder,
  kind: z.enum(
    members<
      'key_deactivated' | 'key_reactivated' | 'key_disabled' | 'key_enabled' | 'project_limit_set' | 'project_limit_removed' | 'reporter_blocked' | 'reporter_unblocked' | 'key_limit_set' | 'key_limit_removed' | 'workspace_limit_set' | 'workspace_limit_removed'
    >({
      key_deactivated: true,
      key_reactivated: true,
      key_disabled: true,
      key_enabled: true,
      project_limit_set: true,
      project_limit_removed: true,
      reporter_blocked: true,
      reporter_unblocked: true,
      key_limit_set: true,
      key_limit_removed: true,
      workspace_limit_set: true,
      workspace_limit_removed: true,
    }),
  ),
  provider: z.string(),
  keyHash: z.nullable(KeyHash),
  projectId: z.nullable(z.string()),
  reason: z.enum(
    members<'limit_reached' | 'period_start' | 'released' | 'budget_changed' | 'budget_deleted' | 'connection_changed' | 'anomaly'>({
      limit_reached: true,
      period_start: true,
      released: true,
      budget_changed: true,
      budget_deleted: true,
      connection_changed: true,
      anomaly: true,
    }),
  ),
  /** `burnrate`, or the id of the user who released. */
  actor: z.string(),
  result: z.enum(members<'ok' | 'failed'>({ ok: true, failed: true })),
  detail: z.string(),
  at: Timestamp,
  /** The holder's name when the act was taken (a budget's, an anomaly rule's; null when not recorded): a deleted budget keeps its name here. */
  holderName: z.nullable(z.string()),
  /** The target's name when the act was taken: the key's label or name, the project's or workspace's name (null when not recorded). */
  targetName: z.nullable(z.string()),
});

/** GET /keys/{hash}/incident. */
export const KeyIncident = z.object({
  keyHash: KeyHash,
  name: z.string(),
  provider: z.string(),
  /** What the key spent in the last 60 minutes. */
  ratePerHour: Usd,
  /** Its average hourly spend over its last 14 complete days (`baselineDays` counted; 0: new). */
  baselinePerHour: Usd,
  baselineDays: Count,
  /** The last 24 hours and the current one, oldest first (`hour`: the hour's start). */
  hours: z.array(z.object({ hour: Timestamp, cost: Usd })),
  stopped: z.boolean(),
  holds: z.array(
    z.object({
      ruleId: RuleId,
      ruleName: z.nullable(z.string()),
      lever: z.enum(members<'key' | 'reporter' | 'project'>({ key: true, reporter: true, project: true })),
      status: z.enum(members<'stopped' | 'stopping' | 'releasing' | 'released' | 'failed'>({ stopped: true, stopping: true, releasing: true, released: true, failed: true })),
      since: Timestamp,
      releasedBy: z.nullable(z.string()),
      detail: z.string(),
    }),
  ),
});

/** POST /keys/{hash}/release. */
export const KeyRelease = z.object({
  keyHash: KeyHash,
  released: z.array(
    z.object({
      ruleId: RuleId,
      lever: z.enum(members<'key' | 'reporter' | 'project'>({ key: true, reporter: true, project: true })),
      /** `releasing`: a sync switches the key on at its provider; `held_by_budget`: a stop budget keeps it off. */
      status: z.enum(members<'released' | 'releasing' | 'held_by_budget'>({ released: true, releasing: true, held_by_budget: true })),
    }),
  ),
});

/** GET /ingest/blocks: the keys the reporter refuses, and when to read again. */
export const IngestBlocks = z.object({
  blocked: z.array(z.object({ keyHash: KeyHash, budgetId: z.nullable(BudgetId), budgetName: z.nullable(z.string()), holder: LeverHolder, since: Timestamp })),
  refreshAfterSeconds: z.number(),
});

const Channel = z.enum(members<'email' | 'webhook' | 'slack'>({ email: true, webhook: true, slack: true }));
const webhookUrl = z.optional(z.string());
const slackWebhookUrl = z.optional(z.string());

/** No channel twice (`uniqueItems` in the document: UNIQUE_ITEMS). */
export const Channels = z.array(Channel);
/** Arrays whose items never repeat: the document says `uniqueItems: true` (zod checks it with a refinement). */
export const UNIQUE_ITEMS = new Set<z.core.$ZodType>([Channels]);

const ruleFields = {
  id: RuleId,
  name: z.string(),
  channels: Channels,
  isActive: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastTriggeredAt: z.nullable(Timestamp),
};

export const CostThresholdConfig = z.object({
  threshold: Usd,
  period: z.enum(members<'daily' | 'weekly' | 'monthly'>({ daily: true, weekly: true, monthly: true })),
  keyHash: z.optional(KeyHash),
  webhookUrl,
  slackWebhookUrl,
});
export const NewKeyConfig = z.object({ webhookUrl, slackWebhookUrl });
export const SpendSpikeConfig = z.object({ multiplier: z.number(), minSpend: Usd, webhookUrl, slackWebhookUrl });
export const SpendAnomalyConfig = z.object({
  minUsdPerHour: Usd,
  multiplier: z.number(),
  action: z.enum(members<'notify' | 'stop'>({ notify: true, stop: true })),
  webhookUrl,
  slackWebhookUrl,
});

/** One rule type each, with its config: named components, so generated clients name them too. */
export const CostThresholdRule = z.object({ type: z.literal('cost_threshold'), config: CostThresholdConfig, ...ruleFields });
export const NewKeyRule = z.object({ type: z.literal('new_key'), config: NewKeyConfig, ...ruleFields });
export const SpendSpikeRule = z.object({ type: z.literal('spend_spike'), config: SpendSpikeConfig, ...ruleFields });
export const SpendAnomalyRule = z.object({ type: z.literal('spend_anomaly'), config: SpendAnomalyConfig, ...ruleFields });

/** A rule: its `config` has the shape of its `type`. */
export const Rule = z.discriminatedUnion('type', [CostThresholdRule, NewKeyRule, SpendSpikeRule, SpendAnomalyRule]);

export const AlertType = z.enum(ALERT_TYPES);

export const Alert = z.object({
  id: AlertId,
  type: AlertType,
  status: z.enum(members<'triggered' | 'acknowledged'>({ triggered: true, acknowledged: true })),
  ruleId: z.nullable(RuleId),
  budgetId: z.nullable(BudgetId),
  keyHash: z.nullable(KeyHash),
  /** The keys the alert is about: all keys one ingest discovered (`new_key`; `keyHash` is the first), else `[keyHash]` or `[]`. */
  keyHashes: z.array(KeyHash),
  /** `connection_error`: the provider connection that fails. */
  connectionId: z.optional(z.string()),
  title: z.string(),
  message: z.string(),
  /** The period the alert belongs to: a day `2026-11-21`, a week's Monday, or a month `2026-11`. */
  period: z.string(),
  /** Null for alerts without an amount (new_key). */
  threshold: z.nullable(Usd),
  observedSpend: z.nullable(Usd),
  deliveries: z.array(
    z.object({
      channel: Channel,
      /** `suppressed`: settled without sending — past an hourly cap, or no verified recipient who wants alert e-mail. */
      status: z.enum(members<'pending' | 'sent' | 'failed' | 'suppressed'>({ pending: true, sent: true, failed: true, suppressed: true })),
      attempts: Count,
    }),
  ),
  triggeredAt: Timestamp,
  acknowledgedAt: z.nullable(Timestamp),
  /** The user who acknowledged it, or `burnrate` for an alert Burnrate closed itself (a plan limit an upgrade lifted). */
  acknowledgedBy: z.nullable(z.union([UserId, z.literal('burnrate')])),
});

/** GET /webhook-secret: the account's signing secret for webhook deliveries and how to check a signature. */
export const WebhookSecret = z.object({
  secret: z.string().check(z.regex(/^whsec_/)),
  header: z.string(),
  algorithm: z.string(),
  format: z.string(),
  previousSecretExpiresAt: z.nullable(Timestamp),
});

// ---- billing ------------------------------------------------------------------------------------------------

/** GET /billing/status. */
export const BillingStatus = z.object({
  plan: Plan,
  billingStatus: BillingStatusValue,
  /** The limits in force: the plan's, or FREE's when the billing status does not grant the plan's (docs/features/billing.md). */
  usage: z.object({
    trackedRequests: Count,
    limit: Count,
    keys: Count,
    keyLimit: Count,
    /** Seats taken: users plus pending invitations. */
    users: Count,
    userLimit: Count,
  }),
  /** While PAST_DUE: when the paid plan's limits end (7 days after the failed payment); else null. */
  graceEndsAt: z.nullable(Timestamp),
  currentPeriodStart: Timestamp,
  currentPeriodEnd: Timestamp,
});

/** POST /billing/checkout: open `url` (Stripe Checkout) in the browser. */
export const Checkout = z.object({ url: z.url(), sessionId: z.string() });

/** POST /billing/portal: open `url` (Stripe's customer portal) in the browser. */
export const Portal = z.object({ url: z.url() });

/** POST /billing/webhook (Stripe only). */
export const WebhookReceipt = z.object({
  received: z.literal(true),
  /** Applied before: nothing changed. */
  duplicate: z.optional(z.literal(true)),
  /** Not an event acted on: nothing changed. */
  ignored: z.optional(z.literal(true)),
  /** Older than the state held: nothing changed. */
  stale: z.optional(z.literal(true)),
});

// ---- service ------------------------------------------------------------------------------------------------

export const Health = z.object({ status: z.literal('ok') });

/** GET /openapi.json: this document (its outline; it is OpenAPI 3.1). */
export const OpenApiDocument = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

/** Every response component of the document, by its name there. */
/** A provider connection (docs/features/connections.md): never the admin key, only its last 4 characters. */
export const Connection = z.object({
  id: ConnectionId,
  provider: z.enum(members<'openai' | 'anthropic' | 'openrouter'>({ openai: true, anthropic: true, openrouter: true })),
  name: z.string(),
  /** The admin key's last 4 characters. */
  keyHint: z.string(),
  status: z.enum(members<'active' | 'paused' | 'error'>({ active: true, paused: true, error: true })),
  /** What a person can act on: the provider's refusal, a plan limit that held usage back, a failed sync. */
  statusDetail: z.nullable(z.string()),
  lastSyncAt: z.nullable(Timestamp),
  lastSuccessAt: z.nullable(Timestamp),
  /** The first day imported (the first day of the previous UTC month when connected). */
  importedFrom: CalendarDate,
  /** Whether stop budgets may act through this connection's admin key (admin PATCH). */
  enforcement: z.enum(members<'on' | 'off'>({ on: true, off: true })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const Reconciliation = z.object({
  from: CalendarDate,
  to: CalendarDate,
  /**
   * Every day of the range: what Burnrate shows for the connection's keys (`computedUsd`; on a settled day the bill,
   * plus Anthropic Priority Tier's estimate), the token estimate, and what the provider bills (null: not billed yet).
   */
  days: z.array(
    z.object({
      date: CalendarDate,
      /** The provider's cost endpoint has this day: its spend is the bill. */
      settled: z.boolean(),
      computedUsd: Usd,
      estimatedUsd: Usd,
      billedUsd: z.nullable(Usd),
      /** The bill's lines (models and tiers, tools, storage) next to their estimate; empty while not settled. */
      lines: z.array(
        z.object({
          line: z.string(),
          estimatedUsd: Usd,
          /** null: not in the provider's bill (Anthropic Priority Tier). */
          billedUsd: z.nullable(Usd),
          /**
           * Why it differs from its estimate: `priority_tier` (billed under the Priority Tier commitment, not in the
           * cost report), `not_estimated` (tools, storage, usage no key explains), `unpriced` (a model without a
           * price), `plan_key_limit` (keys not tracked on the plan), or null.
           */
          reason: z.nullable(z.enum(['priority_tier', 'not_estimated', 'unpriced', 'plan_key_limit'])),
        }),
      ),
    }),
  ),
  total: z.object({ computedUsd: Usd, estimatedUsd: Usd, billedUsd: Usd }),
});

/** A month of the account: open, or closed (frozen) by a person or by Burnrate. */
export const Month = z.object({
  /** YYYY-MM. */
  month: z.string(),
  status: z.enum(['open', 'closed']),
  closedAt: z.nullable(Timestamp),
  /** The user id who closed it, `burnrate` when it closed by itself once every connection had settled it, null while open. */
  closedBy: z.nullable(z.string()),
  /** Per connection, the last day of the month settled without a gap (null: none); for a closed month, as it was when it closed. */
  settledThrough: z.array(z.object({ connectionId: z.string(), provider: z.string(), date: z.nullable(CalendarDate) })),
});

export const responseComponents = {
  Problem,
  FieldError,
  GatewayMessage,
  Timestamp,
  CalendarDate,
  AuthSession,
  RefreshedToken,
  User,
  UserList: page(User),
  Invitation,
  InvitationList: page(Invitation),
  InvitationPreview,
  Account,
  Me,
  EmailVerified,
  IngestKey,
  IngestKeyList: page(IngestKey),
  CreatedIngestKey,
  IngestResult,
  Key,
  /** GET /keys: `total` counts every key that matches the search and filters, across all pages. */
  KeyList: z.extend(page(Key), { total: Count }),
  Breakdown,
  KeyDetail,
  Project,
  Customer,
  CustomerList: page(Customer),
  /** GET /projects: every project of the account's connections, by name (not paged: at most one per key). */
  ProjectList: z.object({ items: z.array(Project) }),
  Spend,
  /** GET /spend/export: text/csv. */
  SpendCsv: z.string(),
  SpendExport,
  Price,
  PriceList: z.object({ items: z.array(Price) }),
  Budget,
  BudgetList: page(Budget),
  EnforcementAction,
  EnforcementActionList: page(EnforcementAction),
  IngestBlocks,
  KeyIncident,
  KeyRelease,
  Rule,
  RuleList: page(Rule),
  CostThresholdRule,
  NewKeyRule,
  SpendSpikeRule,
  SpendAnomalyRule,
  CostThresholdConfig,
  NewKeyConfig,
  SpendSpikeConfig,
  SpendAnomalyConfig,
  Alert,
  /** GET /alerts: `counts` are the account's, over every alert (exact counters), whatever the filters. */
  AlertList: z.extend(page(Alert), { counts: z.object({ triggered: Count, acknowledged: Count }) }),
  /** POST /alerts/acknowledge: how many triggered alerts this request acknowledged. */
  AcknowledgeResult: z.object({ acknowledged: Count }),
  WebhookSecret,
  BillingStatus,
  Checkout,
  Portal,
  WebhookReceipt,
  Health,
  OpenApiDocument,
  Connection,
  ConnectionList: page(Connection),
  SyncQueued: z.object({ queuedAt: Timestamp }),
  Reconciliation,
  Month,
  MonthList: z.object({ items: z.array(Month) }),
} as const;

export type ResponseComponent = keyof typeof responseComponents;
