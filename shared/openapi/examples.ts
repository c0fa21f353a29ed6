/**
 * One realistic example per request and response body of the OpenAPI document, by component name (and per error
 * status). test/unit/openapi.test.ts validates each against its schema (closed, as the contract test does), and
 * Spectral's `oas3-valid-media-example` does too, so an example can never drift from the schema it shows.
 */
const ACCOUNT = 'br_01JZ3N5Q8W4XKJ7T2M9R6V0ABC';
const USER = 'usr_01JZ3N5Q8W4XKJ7T2M9R6V0ABD';
const USER_2 = 'usr_01JZ3P0B6H2E9D4S8K1N7Q3XYZ';
const INGEST_KEY = 'ink_01JZ3N6A1B2C3D4E5F6G7H8J9K';
const BUDGET = 'bud_01JZ3N7M2P4Q6R8S0T2V4W6X8Y';
const RULE = 'rul_01JZ3N8E3F5G7H9J1K3M5N7P9Q';
const ALERT = 'alt_01JZ3N9R4S6T8V0W2X4Y6Z8A0B';
const INVITATION = 'inv_01JZ3NA5B7C9D1E3F5G7H9J1K3';
const HASH = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const NOW = '2026-11-21T22:34:24.123Z';
const CREATED = '2026-11-02T09:15:00.000Z';
const JWT = 'eyJraWQiOiJDb2duaXRvTG9jYWwiLCJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3IifQ.c2lnbmF0dXJl';

const user = {
  userId: USER,
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  role: 'admin',
  emailVerified: true,
  alertEmails: true,
  createdAt: CREATED,
  updatedAt: CREATED,
};
const ownPrice = {
  provider: 'openai',
  model: 'gpt-4o',
  input: 2.5,
  cachedInput: 1.25,
  cacheWrite: 2.5,
  cacheWrite1h: 2.5,
  output: 10,
  tiers: { priority: { input: 4.25, cachedInput: 2.125, cacheWrite: 4.25, cacheWrite1h: 4.25, output: 17 } },
  longContext: null,
  source: 'account',
  sourceUrl: null,
  checkedAt: null,
  updatedAt: NOW,
};
const ingestKey = { id: INGEST_KEY, name: 'production', prefix: 'brk_Q2x9Lm4T', createdAt: CREATED, updatedAt: CREATED, lastUsedAt: NOW };
const key = {
  stoppedBy: [] as unknown[],
  hash: HASH,
  source: 'ingest',
  label: 'Backend (OpenAI)',
  hint: 'sk-...a1B2',
  provider: 'openai',
  name: null,
  providerKeyId: null,
  project: null,
  providerStatus: null,
  providerLimitUsd: null,
  firstSeenAt: CREATED,
  lastSeenAt: NOW,
  spend: { today: 1.25, monthToDate: 84.5, total: 312.075, forecastMonthEnd: 121.3 },
  requests: { today: 120, monthToDate: 8042, total: 30517 },
  unpricedRequests: 0,
  tracked: true,
  tags: { env: 'prod' },
  effectiveTags: { team: 'search', env: 'prod' },
};
const customer = { customerId: 'acme-corp', costUsd: 12.5, requests: 1200, inputTokens: 2400000, outputTokens: 380000, firstSeenAt: CREATED, lastSeenAt: NOW };
const project = { connectionId: 'con_01JD4Z7Q8W9X0Y1Z2A3B4C5D6E', provider: 'openai', id: 'proj_abc123', name: 'Search', tags: { team: 'search' }, keys: 12 };
const totals = { costUsd: 1.25, requests: 120, inputTokens: 250000, cachedInputTokens: 50000, outputTokens: 40000 };
const budget = {
  id: BUDGET,
  name: 'Monthly OpenAI',
  monthlyLimit: 500,
  alertThreshold: 80,
  scope: 'ACCOUNT',
  keyHash: null,
  action: 'notify',
  spend: { monthToDate: 84.5 },
  percentUsed: 16.9,
  status: 'ok',
  alertOnForecast: true,
  forecast: { monthEnd: 121.3, percentOfLimit: 24.26 },
  createdAt: CREATED,
  updatedAt: CREATED,
};
const action = {
  id: 'act_01JD8X3Q5Z7N9R2T4V6W8Y0A1C',
  budgetId: BUDGET,
  holder: { kind: 'budget', id: BUDGET },
  kind: 'key_deactivated',
  provider: 'anthropic',
  keyHash: HASH,
  projectId: null,
  reason: 'limit_reached',
  actor: 'burnrate',
  result: 'ok',
  detail: 'Key prod-api set inactive at Anthropic',
  at: CREATED,
  holderName: 'Monthly Anthropic',
  targetName: 'prod-api',
};
const rule = {
  id: RULE,
  type: 'cost_threshold',
  name: 'Daily spend over $50',
  config: { threshold: 50, period: 'daily', webhookUrl: 'https://hooks.example.com/burnrate' },
  channels: ['email', 'webhook'],
  isActive: true,
  createdAt: CREATED,
  updatedAt: CREATED,
  lastTriggeredAt: null,
};
const alert = {
  id: ALERT,
  type: 'cost_threshold',
  status: 'triggered',
  ruleId: RULE,
  budgetId: null,
  keyHash: null,
  keyHashes: [],
  title: 'Daily spend over $50',
  message: 'Spend today is $52.10, over the $50.00 threshold of "Daily spend over $50".',
  period: '2026-11-21',
  threshold: 50,
  observedSpend: 52.1,
  deliveries: [
    { channel: 'email', status: 'sent', attempts: 1 },
    { channel: 'webhook', status: 'sent', attempts: 1 },
  ],
  triggeredAt: NOW,
  acknowledgedAt: null,
  acknowledgedBy: null,
};
const invitation = {
  id: INVITATION,
  email: 'grace@example.com',
  role: 'member',
  status: 'pending',
  invitedBy: USER,
  expiresAt: '2026-11-28T22:34:24.123Z',
  createdAt: NOW,
};
const webhookSecret = {
  secret: 'whsec_3q2l0S8vTq8n6h3m9Jt0cQ',
  header: 'Burnrate-Signature',
  algorithm: 'HMAC-SHA256',
  format: 't=<unix seconds>,v1=<hex HMAC of "<t>.<raw body>">',
  previousSecretExpiresAt: null,
};
const page = <T>(items: T[]) => ({ items, nextCursor: null });

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  CreateConnectionRequest: { provider: 'openai', adminKey: 'sk-admin-EXAMPLExxxxxxxxxxxxxxxxxxxxx9Qa', name: 'Acme on OpenAI' },
  PatchConnectionRequest: { status: 'paused' },
  RegisterRequest: { email: 'ada@example.com', password: 'Analytical1843', firstName: 'Ada', lastName: 'Lovelace', companyName: 'Engines Ltd' },
  LoginRequest: { email: 'ada@example.com', password: 'Analytical1843' },
  PatchMeRequest: { firstName: 'Ada', alertEmails: false },
  VerifyEmailRequest: { token: 'Xq3v9LrT2mN8bW1cK5pZ7yH4dJ6fG0sA' },
  ForgotPasswordRequest: { email: 'ada@example.com' },
  ResetPasswordRequest: { token: 'Xq3v9LrT2mN8bW1cK5pZ7yH4dJ6fG0sA', password: 'Difference1822' },
  ChangePasswordRequest: { currentPassword: 'Analytical1843', newPassword: 'Difference1822' },
  RefreshRequest: { refreshToken: 'eyJjdHkiOiJKV1QiLCJlbmMiOiJBMjU2R0NNIn0.refresh-token' },
  CreateIngestKeyRequest: { name: 'production' },
  IngestRequest: {
    events: [
      {
        requestId: 'req_7f3a9c',
        keyHash: HASH,
        keyHint: 'sk-...a1B2',
        provider: 'openai',
        model: 'gpt-4o',
        inputTokens: 1200,
        outputTokens: 350,
        cachedInputTokens: 200,
        timestamp: NOW,
      },
      {
        requestId: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        keyHash: HASH,
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        inputTokens: 52000,
        outputTokens: 900,
        cachedInputTokens: 48000,
        cacheWriteInputTokens: 3000,
        cacheWrite1hInputTokens: 0,
        serviceTier: 'priority',
        webSearchRequests: 2,
      },
    ],
  },
  LabelRequest: { label: 'Backend (OpenAI)', tags: { env: 'prod' } },
  ProjectTagsRequest: { tags: { team: 'search', 'cost-center': 'cc-1042' } },
  AcknowledgeRequest: { all: true, type: 'budget_threshold' },
  AcknowledgeIdsRequest: { ids: ['alt_01JD8X3Q5Z7N9R2T4V6W8Y0A1B'] },
  AcknowledgeAllRequest: { all: true, keyHash: HASH },
  CreateBudgetRequest: { name: 'Monthly OpenAI', monthlyLimit: 500, alertThreshold: 80, scope: 'ACCOUNT' },
  PatchBudgetRequest: { monthlyLimit: 750 },
  CreateExportRequest: { from: '2025-12-01', to: '2026-11-30' },
  CloseMonthRequest: { force: false },
  CreateRuleRequest: {
    type: 'cost_threshold',
    name: 'Daily spend over $50',
    config: { threshold: 50, period: 'daily', webhookUrl: 'https://hooks.example.com/burnrate' },
    channels: ['email', 'webhook'],
  },
  PatchRuleRequest: { isActive: false },
  CheckoutRequest: { plan: 'GROWTH' },
  PatchUserRequest: { role: 'viewer' },
  PutPriceRequest: { input: 2.5, cachedInput: 1.25, cacheWrite: 3.125, cacheWrite1h: 5, output: 10, tiers: { priority: { input: 4.25, cachedInput: 2.125, output: 17 } } },
  CreateInvitationRequest: { email: 'grace@example.com', role: 'member' },
  AcceptInvitationRequest: { token: 'Xq3v9LrT2mN8bW1cK5pZ7yH4dJ6fG0sA', password: 'Compiler1952', firstName: 'Grace', lastName: 'Hopper' },
  StripeEvent: {
    id: 'evt_1QzX2bHk4L9mN0pQ',
    object: 'event',
    type: 'customer.subscription.updated',
    created: 1795300000,
    data: { object: { id: 'sub_1QzX2bHk4L9mN0pQ', object: 'subscription', status: 'active' } },
  },
};

export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  Health: { status: 'ok' },
  OpenApiDocument: { openapi: '3.1.0', info: { title: 'Burnrate API', version: '0.1.0' }, paths: {} },
  AuthSession: { accountId: ACCOUNT, userId: USER, token: JWT, refreshToken: 'eyJjdHkiOiJKV1QiLCJlbmMiOiJBMjU2R0NNIn0.refresh-token', expiresIn: 3600 },
  EmailVerified: { emailVerified: true },
  RefreshedToken: { token: JWT, expiresIn: 3600 },
  Me: { user, account: { accountId: ACCOUNT, companyName: 'Engines Ltd', plan: 'GROWTH', billingStatus: 'ACTIVE', createdAt: CREATED } },
  CreatedIngestKey: {
    id: INGEST_KEY,
    name: 'production',
    key: 'brk_Q2x9Lm4T7vK1pR8sW3yZ6aB0cD5eF2gH9jL4mN7qS1t',
    prefix: 'brk_Q2x9Lm4T',
    createdAt: NOW,
    updatedAt: NOW,
    lastUsedAt: null,
  },
  IngestKeyList: page([ingestKey]),
  IngestResult: {
    accepted: 1,
    duplicates: 0,
    rejected: [{ index: 1, code: 'timestamp_too_old', message: 'timestamp is more than 35 days old.' }],
  },
  KeyList: { items: [key], nextCursor: 'eyJ2IjoxLCJrIjoiLi4uIn0', total: 1000 },
  Key: key,
  Project: project,
  ProjectList: { items: [project] },
  Customer: customer,
  CustomerList: { items: [customer], nextCursor: null },
  KeyDetail: {
    ...key,
    breakdown: {
      from: '2026-11-20',
      to: '2026-11-21',
      daily: [
        { date: '2026-11-20', settled: false, ...totals },
        { date: '2026-11-21', settled: false, ...totals },
      ],
      byModel: [{ provider: 'openai', model: 'gpt-4o', ...totals, costUsd: 2.5, requests: 240 }],
      notByModelUsd: 0,
    },
  },
  BudgetList: page([budget]),
  Budget: budget,
  EnforcementActionList: page([action]),
  IngestBlocks: {
    blocked: [
      { keyHash: HASH, budgetId: BUDGET, budgetName: 'Monthly OpenAI', holder: { kind: 'budget', id: BUDGET }, since: CREATED },
      { keyHash: HASH, budgetId: null, budgetName: 'Runaway keys', holder: { kind: 'anomaly', id: RULE }, since: NOW },
    ],
    refreshAfterSeconds: 15,
  },
  KeyIncident: {
    keyHash: HASH,
    name: 'Support bot',
    provider: 'anthropic',
    ratePerHour: 48.2,
    baselinePerHour: 0.95,
    baselineDays: 14,
    hours: Array.from({ length: 25 }, (_, i) => ({ hour: `2026-11-${i < 3 ? '20' : '21'}T${String((i + 21) % 24).padStart(2, '0')}:00:00Z`, cost: i === 24 ? 48.2 : 0.9 })),
    stopped: true,
    holds: [{ ruleId: RULE, ruleName: 'Runaway keys', lever: 'key', status: 'stopped', since: NOW, releasedBy: null, detail: 'Key Support bot set inactive at Anthropic' }],
  },
  KeyRelease: { keyHash: HASH, released: [{ ruleId: RULE, lever: 'key', status: 'releasing' }] },
  Spend: {
    from: '2026-11-01',
    to: '2026-11-21',
    groupBy: 'model',
    total: { costUsd: 84.5, requests: 8042, inputTokens: 10450000, cachedInputTokens: 2100000, outputTokens: 1830000 },
    groups: [
      { provider: 'openai', model: 'gpt-4o', costUsd: 61.25, requests: 5021, inputTokens: 7300000, cachedInputTokens: 1500000, outputTokens: 1310000 },
      { provider: 'anthropic', model: 'claude-sonnet-4', costUsd: 23.25, requests: 3021, inputTokens: 3150000, cachedInputTokens: 600000, outputTokens: 520000 },
    ],
    forecast: { monthEnd: 121.3, method: 'trailing-7-day-average' },
    previous: {
      from: '2026-10-01',
      to: '2026-10-21',
      total: { costUsd: 75.4, requests: 7410, inputTokens: 9320000, cachedInputTokens: 1800000, outputTokens: 1650000 },
      notes: [],
    },
    coverage: {
      complete: false,
      notes: [
        {
          code: 'plan_key_limit',
          provider: 'openai',
          count: 19,
          message: '19 OpenAI keys are not tracked on the Free plan (5 keys at most): their spend is not in these figures. Upgrade to track them; their history is imported with the next sync.',
        },
        {
          code: 'estimated',
          provider: 'openai',
          from: '2026-11-21',
          to: '2026-11-21',
          count: 1,
          message: 'OpenAI: 1 day (2026-11-21) is an estimate from tokens and the price table until OpenAI bills it.',
        },
      ],
    },
  },
  SpendCsv:
    'date,key_hash,key_label,key_name,project_id,project_name,settled,correction,tags,provider,model,requests,input_tokens,cached_input_tokens,output_tokens,cost_usd\r\n' +
    `2026-11-21,${HASH},Backend (OpenAI),,,,false,false,{},openai,gpt-4o,120,150000,20000,18000,1.250000\r\n`,
  SpendExport: {
    id: 'exp_01JD8X5ZQ4M7N2P3R6S9T0V1W2',
    format: 'csv',
    from: '2025-12-01',
    to: '2026-11-30',
    status: 'ready',
    rows: 412388,
    bytes: 9731542,
    url: `https://burnrate-exports.s3.us-east-1.amazonaws.com/exports/${ACCOUNT}/exp_01JD8X5ZQ4M7N2P3R6S9T0V1W2.csv.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=…`,
    expiresAt: '2026-11-21T23:34:24.000Z',
    createdAt: NOW,
  },
  Price: ownPrice,
  PriceList: {
    items: [
      {
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        input: 3,
        cachedInput: 0.3,
        cacheWrite: 3.75,
        cacheWrite1h: 6,
        output: 15,
        tiers: {},
        longContext: { aboveInputTokens: 200_000, input: 6, cachedInput: 0.6, cacheWrite: 7.5, cacheWrite1h: 12, output: 22.5 },
        source: 'builtin',
        sourceUrl: 'https://platform.claude.com/docs/en/about-claude/pricing',
        checkedAt: '2026-11-24',
        updatedAt: '2026-11-24T00:00:00.000Z',
      },
      ownPrice,
    ],
  },
  RuleList: page([rule]),
  Rule: rule,
  AlertList: { ...page([alert]), counts: { triggered: 192, acknowledged: 41 } },
  AcknowledgeResult: { acknowledged: 150 },
  Alert: { ...alert, status: 'acknowledged', acknowledgedAt: NOW, acknowledgedBy: USER },
  WebhookSecret: webhookSecret,
  UserList: page([user, { ...user, userId: USER_2, email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', role: 'member' }]),
  User: { ...user, userId: USER_2, email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', role: 'viewer' },
  Invitation: invitation,
  InvitationList: page([invitation]),
  InvitationPreview: { company: 'Analytical Engines Ltd', email: 'grace@example.com', role: 'member', expiresAt: '2026-11-28T22:34:24.123Z' },
  BillingStatus: {
    plan: 'GROWTH',
    billingStatus: 'ACTIVE',
    usage: { trackedRequests: 8042, limit: 1000000, keys: 3, keyLimit: 50, users: 2, userLimit: 10 },
    graceEndsAt: null,
    currentPeriodStart: '2026-11-01T00:00:00.000Z',
    currentPeriodEnd: '2026-12-01T00:00:00.000Z',
  },
  Checkout: { url: 'https://checkout.stripe.com/c/pay/cs_test_a1B2c3D4', sessionId: 'cs_test_a1B2c3D4' },
  Portal: { url: 'https://billing.stripe.com/p/session/test_YWNjdF8x' },
  WebhookReceipt: { received: true },
  Connection: {
    id: 'con_01JD4Z7Q8W9X0Y1Z2A3B4C5D6E',
    provider: 'openai',
    name: 'OpenAI organization',
    keyHint: 'x9Qa',
    status: 'active',
    statusDetail: null,
    lastSyncAt: NOW,
    lastSuccessAt: NOW,
    importedFrom: '2026-10-01',
    enforcement: 'off',
    createdAt: NOW,
    updatedAt: NOW,
  },
  SyncQueued: { queuedAt: NOW },
  Month: {
    month: '2026-10',
    status: 'closed',
    closedAt: NOW,
    closedBy: 'burnrate',
    settledThrough: [{ connectionId: 'con_01JD8ZQ3V6W9X2Y5Z8A1B4C7D0', provider: 'openai', date: '2026-10-31' }],
  },
  get MonthList() {
    return { items: [RESPONSE_EXAMPLES.Month, { month: '2026-11', status: 'open', closedAt: null, closedBy: null, settledThrough: [{ connectionId: 'con_01JD8ZQ3V6W9X2Y5Z8A1B4C7D0', provider: 'openai', date: '2026-11-20' }] }] };
  },
  get ConnectionList() {
    return { items: [RESPONSE_EXAMPLES.Connection], nextCursor: null };
  },
  Reconciliation: {
    from: '2026-11-20',
    to: '2026-11-21',
    days: [
      {
        date: '2026-11-20',
        settled: true,
        computedUsd: 43.1,
        estimatedUsd: 41.27,
        billedUsd: 43.1,
        lines: [
          { line: 'gpt-5.1-2025-11-13', estimatedUsd: 41.27, billedUsd: 41.5, reason: null },
          { line: 'Vector storage', estimatedUsd: 0, billedUsd: 1.6, reason: 'not_estimated' },
        ],
      },
      { date: '2026-11-21', settled: false, computedUsd: 12.5, estimatedUsd: 12.5, billedUsd: null, lines: [] },
    ],
    total: { computedUsd: 55.6, estimatedUsd: 53.77, billedUsd: 43.1 },
  },
};

const problem = (status: number, slug: string, title: string, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `/problems/${slug}`,
  title,
  status,
  detail,
  ...extra,
  instance: '/requests/c1a7f4d2-5b1e-4f0a-9a57-2d9e0f1b3c4d',
});

export const ERROR_EXAMPLES: Record<number, unknown> = {
  400: problem(400, 'validation-error', 'Your request is not valid.', 'monthlyLimit must be greater than 0.', {
    errors: [{ path: 'monthlyLimit', message: 'monthlyLimit must be greater than 0.' }],
  }),
  401: problem(401, 'unauthorized', 'Unauthorized.', 'A valid bearer token is required.'),
  403: problem(403, 'forbidden', 'Forbidden.', 'Your role does not allow this.'),
  404: problem(404, 'not-found', 'Not found.', 'The resource does not exist.'),
  409: problem(409, 'conflict', 'Conflict.', 'A budget with this scope and key exists already.'),
  413: problem(413, 'payload-too-large', 'The request body is too large.', 'The body must be at most 1048576 bytes.'),
  415: problem(415, 'unsupported-media-type', 'The body must be JSON.', 'Content-Type text/plain is not JSON: send application/json.'),
  429: problem(429, 'too-many-requests', 'Too many requests.', 'Slow down and retry after the Retry-After seconds.'),
  500: problem(500, 'internal-error', 'Internal server error.', 'Something went wrong on our side. Quote the request id if you contact support.'),
  502: problem(502, 'provider-unavailable', 'The provider could not be reached.', 'OpenAI could not be reached or answered with an error; nothing was stored. Try again in a minute.'),
  503: problem(503, 'billing-off', 'Billing is off.', 'Billing is off in this deployment: plans cannot be bought or changed here.'),
};
