/**
 * Request schemas of the /alert-rules endpoints (zod/mini, strict objects). `config` is strict PER TYPE
 * (a discriminated union on `type`); `config.webhookUrl` is required iff `channels` includes `webhook`.
 */
import * as z from 'zod/mini';
import type { Rule } from '#shared/alerting/model.ts';
import { atLeastOneField, hasAtMostTwoDecimals, KeyHash, money, name } from '#shared/budgets/schemas.ts';
import { config } from '#shared/config.ts';
import { ValidationError } from '#shared/http/errors.ts';
import { validate } from '#shared/http/validate.ts';
import { checkWebhookTarget } from '#shared/net/special-addresses.ts';
import { slackUrlProblem } from '#shared/notify/slack.ts';

export const RULE_TYPES = ['cost_threshold', 'new_key', 'spend_spike', 'spend_anomaly'] as const;
export const CHANNELS = ['email', 'webhook', 'slack'] as const;
export const PERIODS = ['daily', 'weekly', 'monthly'] as const;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MIN_SPIKE_MULTIPLIER = 1.5;
export const MAX_SPIKE_MULTIPLIER = 1000;
export const MIN_ANOMALY_USD_PER_HOUR = 1;
export const MIN_ANOMALY_MULTIPLIER = 2;
export const DEFAULT_ANOMALY_MULTIPLIER = 10;
export const ANOMALY_ACTIONS = ['notify', 'stop'] as const;
const TYPE_ERROR = 'type must be cost_threshold, new_key, spend_spike or spend_anomaly.';

// ---- webhook URLs -------------------------------------------------------------------------------------------

/**
 * Why `value` cannot be a webhook URL, or undefined if it can: the one rule of shared/net/special-addresses.ts
 * (absolute, no credentials, `https:` on a host outside the IANA special-purpose registries; locally with
 * `allowInsecure` loopback receivers too, and only they over `http:`). A public name that RESOLVES to a special
 * address is caught when delivering, with the same table.
 */
export function webhookUrlProblem(value: string, allowInsecure: boolean): string | undefined {
  const target = checkWebhookTarget(value, allowInsecure);
  return target.ok ? undefined : `webhookUrl ${target.reason}.`;
}

/** Read at parse time, so the local stack (and tests) can switch it by env + resetConfig(). */
const WebhookUrl = z.string('webhookUrl must be a string.').check(
  z.maxLength(MAX_WEBHOOK_URL_LENGTH, `webhookUrl must be at most ${MAX_WEBHOOK_URL_LENGTH} characters.`),
  z.superRefine((value, ctx) => {
    const problem = webhookUrlProblem(value, config().allowInsecureWebhooks);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: value });
  }),
);

// ---- configs, one strict shape per type ---------------------------------------------------------------------

const CONFIG_OBJECT = 'config must be an object.';

/** A Slack incoming-webhook URL (shared/notify/slack.ts says which). */
const SlackWebhookUrl = z.string('slackWebhookUrl must be a string.').check(
  z.maxLength(MAX_WEBHOOK_URL_LENGTH, `slackWebhookUrl must be at most ${MAX_WEBHOOK_URL_LENGTH} characters.`),
  z.superRefine((value, ctx) => {
    const problem = slackUrlProblem(value, config().allowInsecureWebhooks);
    if (problem) ctx.issues.push({ code: 'custom', message: problem, input: value });
  }),
);

export const CostThresholdConfig = z.strictObject(
  {
    threshold: money('threshold', { positive: true }),
    period: z.enum(PERIODS, 'period must be daily, weekly or monthly.'),
    keyHash: z.optional(KeyHash),
    webhookUrl: z.optional(WebhookUrl),
    slackWebhookUrl: z.optional(SlackWebhookUrl),
  },
  CONFIG_OBJECT,
);

export const NewKeyConfig = z.strictObject({ webhookUrl: z.optional(WebhookUrl), slackWebhookUrl: z.optional(SlackWebhookUrl) }, CONFIG_OBJECT);

export const SpendSpikeConfig = z.strictObject(
  {
    multiplier: z.number('multiplier must be a number.').check(
      z.gte(MIN_SPIKE_MULTIPLIER, `multiplier must be at least ${MIN_SPIKE_MULTIPLIER}.`),
      z.lte(MAX_SPIKE_MULTIPLIER, `multiplier must be at most ${MAX_SPIKE_MULTIPLIER}.`),
    ),
    minSpend: money('minSpend', { positive: false }),
    webhookUrl: z.optional(WebhookUrl),
    slackWebhookUrl: z.optional(SlackWebhookUrl),
  },
  CONFIG_OBJECT,
);

/**
 * spend_anomaly: every key of the account, its spend of the last hour against its usual hourly spend (14 complete
 * days). `action: "stop"` pulls the key's lever at once, until a person releases it (POST /keys/{hash}/release).
 */
export const SpendAnomalyConfig = z.strictObject(
  {
    minUsdPerHour: money('minUsdPerHour', { positive: true }).check(
      z.gte(MIN_ANOMALY_USD_PER_HOUR, `minUsdPerHour must be at least ${MIN_ANOMALY_USD_PER_HOUR}.`),
    ),
    multiplier: z._default(
      z.number('multiplier must be a number.').check(
        z.gte(MIN_ANOMALY_MULTIPLIER, `multiplier must be at least ${MIN_ANOMALY_MULTIPLIER}.`),
        z.lte(MAX_SPIKE_MULTIPLIER, `multiplier must be at most ${MAX_SPIKE_MULTIPLIER}.`),
        z.refine(hasAtMostTwoDecimals, 'multiplier must have at most 2 decimals.'),
      ),
      DEFAULT_ANOMALY_MULTIPLIER,
    ),
    action: z.enum(ANOMALY_ACTIONS, 'action must be notify or stop.'),
    webhookUrl: z.optional(WebhookUrl),
    slackWebhookUrl: z.optional(SlackWebhookUrl),
  },
  CONFIG_OBJECT,
);

export const Channels = z.array(z.enum(CHANNELS, 'a channel must be email, webhook or slack.'), 'channels must be an array.').check(
  z.minLength(1, 'channels must name at least one channel.'),
  z.refine((channels) => new Set(channels).size === channels.length, 'channels must not repeat a channel.'),
);

const common = {
  name: name(),
  channels: Channels,
  /** Default true. */
  isActive: z.optional(z.boolean('isActive must be true or false.')),
};

/** One rule type each (named components of the OpenAPI document). */
export const CostThresholdRuleBody = z.strictObject({ type: z.literal('cost_threshold'), config: CostThresholdConfig, ...common });
// new_key has nothing to configure: `config` may be left out ({}).
export const NewKeyRuleBody = z.strictObject({ type: z.literal('new_key'), config: z._default(NewKeyConfig, {}), ...common });
export const SpendSpikeRuleBody = z.strictObject({ type: z.literal('spend_spike'), config: SpendSpikeConfig, ...common });
export const SpendAnomalyRuleBody = z.strictObject({ type: z.literal('spend_anomaly'), config: SpendAnomalyConfig, ...common });

export const CreateRuleBody = z
  .discriminatedUnion(
    'type',
    [CostThresholdRuleBody, NewKeyRuleBody, SpendSpikeRuleBody, SpendAnomalyRuleBody],
    { error: TYPE_ERROR },
  )
  .check(
    z.superRefine((rule, ctx) => {
      const wantsWebhook = rule.channels.includes('webhook');
      const hasUrl = rule.config.webhookUrl !== undefined;
      if (wantsWebhook && !hasUrl) {
        ctx.issues.push({ code: 'custom', path: ['config', 'webhookUrl'], message: 'config.webhookUrl is required when channels includes webhook.', input: rule });
      }
      if (!wantsWebhook && hasUrl) {
        ctx.issues.push({ code: 'custom', path: ['config', 'webhookUrl'], message: 'config.webhookUrl is only allowed when channels includes webhook.', input: rule });
      }
      const wantsSlack = rule.channels.includes('slack');
      const hasSlack = rule.config.slackWebhookUrl !== undefined;
      if (wantsSlack && !hasSlack) {
        ctx.issues.push({ code: 'custom', path: ['config', 'slackWebhookUrl'], message: 'config.slackWebhookUrl is required when channels includes slack.', input: rule });
      }
      if (!wantsSlack && hasSlack) {
        ctx.issues.push({ code: 'custom', path: ['config', 'slackWebhookUrl'], message: 'config.slackWebhookUrl is only allowed when channels includes slack.', input: rule });
      }
    }),
  );
export type CreateRuleBody = z.infer<typeof CreateRuleBody>;

/**
 * Partial: at least one field. `config` here is any object: it is checked against the type of the MERGED rule
 * (`mergeRulePatch`), and it replaces the stored config wholesale.
 */
export const PatchRuleBody = z
  .strictObject(
    {
      type: z.optional(z.enum(RULE_TYPES, TYPE_ERROR)),
      name: z.optional(common.name),
      config: z.optional(z.looseObject({}, CONFIG_OBJECT)),
      channels: z.optional(Channels),
      isActive: common.isActive,
    },
    'The body must be a JSON object.',
  )
  .check(atLeastOneField());
export type PatchRuleBody = z.infer<typeof PatchRuleBody>;

/** The rule id in the path; the domain checks it (a malformed id is an unknown id: 404). */
export const RuleParams = z.strictObject({ id: z.string() });
export type RuleParams = z.infer<typeof RuleParams>;

/**
 * The stored rule with the patch applied (config replaced wholesale when given), validated as a whole with the
 * create schema; errors name their paths (`config.threshold`). A different `type` is a 400: it cannot change.
 */
export function mergeRulePatch(existing: Rule, patch: PatchRuleBody): CreateRuleBody {
  // A rule's type is what it is: its alerts, its history and its config all depend on it. Sending the same type is fine.
  if (patch.type !== undefined && patch.type !== existing.type) {
    throw new ValidationError('The type of an alert rule cannot be changed.', [
      {
        path: 'type',
        message: `type cannot be changed (this rule is ${existing.type}); create a new ${patch.type} rule and delete this one instead.`,
      },
    ]);
  }
  const merged = {
    type: existing.type,
    name: patch.name ?? existing.name,
    config: patch.config ?? existing.config,
    channels: patch.channels ?? existing.channels,
    isActive: patch.isActive ?? existing.isActive,
  };
  return validate(CreateRuleBody, merged, 'body');
}
