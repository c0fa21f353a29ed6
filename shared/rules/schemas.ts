/**
 * Request schemas of the /alert-rules endpoints (zod/mini, strict objects). `config` is strict PER TYPE
 * (a discriminated union on `type`); `config.webhookUrl` is required iff `channels` includes `webhook`.
 */
import * as z from 'zod/mini';
import type { Rule } from '#shared/alerting/model.ts';
import { atLeastOneField, KeyHash, money, name } from '#shared/budgets/schemas.ts';
import { config } from '#shared/config.ts';
import { validate } from '#shared/http/validate.ts';

export const RULE_TYPES = ['cost_threshold', 'new_key', 'spend_spike'] as const;
export const CHANNELS = ['email', 'webhook'] as const;
export const PERIODS = ['daily', 'weekly', 'monthly'] as const;
export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MIN_SPIKE_MULTIPLIER = 1.5;
export const MAX_SPIKE_MULTIPLIER = 1000;

// ---- webhook URLs -------------------------------------------------------------------------------------------

/** a.b.c.d → its 32-bit value, or undefined if `host` is not a dotted IPv4 address (the URL parser normalizes 0x7f.1 etc.). */
function ipv4Value(host: string): number | undefined {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** 0/8 ("this host"), 10/8, 127/8, 169.254/16 (link-local, the cloud metadata service), 172.16/12, 192.168/16. */
function isPrivateIpv4(value: number): boolean {
  const a = Math.floor(value / 2 ** 24);
  const b = Math.floor(value / 2 ** 16) % 256;
  return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
}

/** `[::1]` → its 8 groups, or undefined. The URL parser has already normalized it (lower-case hex, no dotted tail). */
function ipv6Groups(host: string): number[] | undefined {
  if (!host.startsWith('[') || !host.endsWith(']')) return undefined;
  const text = host.slice(1, -1);
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0] ?? '');
  const tail = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const groups = halves.length === 2 ? [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** ::, ::1, fc00::/7 (unique local), fe80::/10 (link-local), and IPv4-mapped/-compatible addresses of private IPv4. */
function isPrivateIpv6(groups: number[]): boolean {
  const [first = 0] = groups;
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80) return true;
  const zeroHead = groups.slice(0, 5).every((g) => g === 0);
  if (zeroHead && (groups[5] === 0 || groups[5] === 0xffff)) {
    // ::a.b.c.d and ::ffff:a.b.c.d (this also covers :: and ::1, which fall in 0.0.0.0/8)
    return isPrivateIpv4((groups[6] ?? 0) * 65_536 + (groups[7] ?? 0));
  }
  return false;
}

/**
 * Why `value` cannot be a webhook URL, or undefined if it can: an absolute `https:` URL without credentials whose
 * host is not loopback, private or link-local (nor `localhost`, nor a single-label name that only an internal
 * resolver knows). `allowInsecure` (local stack and tests) also accepts `http:` and such hosts. Credentials are
 * never accepted: they would be stored and shown in clear. A public name that RESOLVES to a private address can
 * only be caught when delivering: the notifier must check the resolved address too.
 */
export function webhookUrlProblem(value: string, allowInsecure: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'webhookUrl must be an absolute URL.';
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return 'webhookUrl must use https.';
  if (url.username !== '' || url.password !== '') return 'webhookUrl must not contain credentials.';
  if (allowInsecure) return undefined;
  const host = url.hostname.replace(/\.$/, '');
  const v4 = ipv4Value(host);
  const v6 = ipv6Groups(host);
  const isPrivate =
    v4 !== undefined
      ? isPrivateIpv4(v4)
      : v6 !== undefined
        ? isPrivateIpv6(v6)
        : host === 'localhost' || host.endsWith('.localhost') || !host.includes('.');
  return isPrivate ? 'webhookUrl must point to a public host (not loopback, private or link-local).' : undefined;
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

export const CostThresholdConfig = z.strictObject(
  {
    threshold: money('threshold', { positive: true }),
    period: z.enum(PERIODS, 'period must be daily, weekly or monthly.'),
    keyHash: z.optional(KeyHash),
    webhookUrl: z.optional(WebhookUrl),
  },
  CONFIG_OBJECT,
);

export const NewKeyConfig = z.strictObject({ webhookUrl: z.optional(WebhookUrl) }, CONFIG_OBJECT);

export const SpendSpikeConfig = z.strictObject(
  {
    multiplier: z.number('multiplier must be a number.').check(
      z.gte(MIN_SPIKE_MULTIPLIER, `multiplier must be at least ${MIN_SPIKE_MULTIPLIER}.`),
      z.lte(MAX_SPIKE_MULTIPLIER, `multiplier must be at most ${MAX_SPIKE_MULTIPLIER}.`),
    ),
    minSpend: money('minSpend', { positive: false }),
    webhookUrl: z.optional(WebhookUrl),
  },
  CONFIG_OBJECT,
);

const Channels = z.array(z.enum(CHANNELS, 'a channel must be email or webhook.'), 'channels must be an array.').check(
  z.minLength(1, 'channels must name at least one channel.'),
  z.refine((channels) => new Set(channels).size === channels.length, 'channels must not repeat a channel.'),
);

const common = {
  name: name(),
  channels: Channels,
  /** Default true. */
  isActive: z.optional(z.boolean('isActive must be true or false.')),
};

export const CreateRuleBody = z
  .discriminatedUnion(
    'type',
    [
      z.strictObject({ type: z.literal('cost_threshold'), config: CostThresholdConfig, ...common }),
      // new_key has nothing to configure: `config` may be left out ({}).
      z.strictObject({ type: z.literal('new_key'), config: z._default(NewKeyConfig, {}), ...common }),
      z.strictObject({ type: z.literal('spend_spike'), config: SpendSpikeConfig, ...common }),
    ],
    { error: 'type must be cost_threshold, new_key or spend_spike.' },
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
      type: z.optional(z.enum(RULE_TYPES, 'type must be cost_threshold, new_key or spend_spike.')),
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
 * create schema: changing `type` needs a matching `config`; errors name their paths (`config.threshold`).
 */
export function mergeRulePatch(existing: Rule, patch: PatchRuleBody): CreateRuleBody {
  const merged = {
    type: patch.type ?? existing.type,
    name: patch.name ?? existing.name,
    config: patch.config ?? existing.config,
    channels: patch.channels ?? existing.channels,
    isActive: patch.isActive ?? existing.isActive,
  };
  return validate(CreateRuleBody, merged, 'body');
}
