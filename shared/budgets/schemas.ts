/**
 * Request schemas of the /budgets endpoints (zod/mini, strict objects), and the money / key-hash / name field
 * schemas that /alert-rules shares. docs/features/budgets-and-alerts.md: a money input is ≥ 0, at most 1,000,000,000,
 * at most 6 decimals.
 */
import * as z from 'zod/mini';
import type { Budget } from '#shared/alerting/model.ts';
import { validate } from '#shared/http/validate.ts';
import { name } from '#shared/http/fields.ts';
import { hasAtMostSixDecimals, usdText } from '#shared/pricing/money.ts';
import { tagNameProblem, tagValueProblem } from '#shared/tags/tags.ts';

export { name };

export const MAX_MONEY_USD = 1_000_000_000;

/** A dollar amount: ≥ 0 (or > 0 with `positive`), ≤ 1,000,000,000, at most 6 decimals (exact in micro-dollars). */
export const money = (field: string, { positive }: { positive: boolean }) =>
  z.number(`${field} must be a number (US dollars).`).check(
    positive ? z.gt(0, `${field} must be greater than 0.`) : z.minimum(0, `${field} must be ≥ 0.`),
    z.maximum(MAX_MONEY_USD, `${field} must be at most ${MAX_MONEY_USD}.`),
    z.refine(hasAtMostSixDecimals, `${field} must have at most 6 decimals (micro-dollars).`),
  );

/** A provider key's SHA-256, as ingestion takes it. */
export const KeyHash = z
  .string('keyHash must be a string.')
  .check(z.regex(/^[0-9a-f]{64}$/, 'keyHash must be a SHA-256 in 64 lower-case hex characters.'));

/** True for a finite number with at most 2 decimals (33.33 yes, 33.333 no). Exact: d/100 is the nearest double. */
export function hasAtMostTwoDecimals(value: number): boolean {
  return Number.isFinite(value) && Math.round(value * 100) / 100 === value;
}

/** For PATCH bodies: at least one (known) field. Silent when the body already has problems (an unknown field). */
export const atLeastOneField = () =>
  z.refine((patch: unknown) => typeof patch === 'object' && patch !== null && Object.keys(patch).length > 0, {
    error: 'Send at least one field to update.',
    when: (payload) => payload.issues.length === 0,
  });

const AlertThreshold = z.number('alertThreshold must be a number (a percentage of monthlyLimit).').check(
  z.gt(0, 'alertThreshold must be greater than 0.'),
  z.maximum(100, 'alertThreshold must be at most 100 (percent of monthlyLimit).'),
  z.refine(hasAtMostTwoDecimals, 'alertThreshold must have at most 2 decimals.'),
);

export const BUDGET_SCOPES = ['ACCOUNT', 'KEY', 'PROJECT', 'TAG'] as const;
const Scope = z.enum(BUDGET_SCOPES, 'scope must be ACCOUNT, KEY, PROJECT or TAG.');
/** scope TAG: every key whose effective tags hold `name: value`, now and later (docs/features/tags-and-chargeback.md). */
const BudgetTag = z.strictObject(
  {
    name: z.string('tag.name must be a tag name.').check(z.refine((n) => tagNameProblem(n) === undefined, 'tag.name must be 1–64 characters of a-z 0-9 _ . - : / (lower case).')),
    value: z.string('tag.value must be a string.').check(z.refine((v) => tagValueProblem(v) === undefined, 'tag.value must be 1–256 characters without control characters.')),
  },
  'tag must be an object {name, value}.',
);
export const BUDGET_ACTIONS = ['notify', 'stop'] as const;
const Action = z.enum(BUDGET_ACTIONS, 'action must be notify or stop.');
const idText = (field: string) => {
  const message = `${field} must be a string of 1–200 characters.`;
  return z.string(message).check(z.trim(), z.minLength(1, message), z.maxLength(200, message));
};

const fields = {
  /** Optional; null (or absent) means no name. */
  name: z.optional(z.nullable(name())),
  monthlyLimit: money('monthlyLimit', { positive: true }),
  alertThreshold: AlertThreshold,
  scope: Scope,
  /** Required with scope KEY, refused with ACCOUNT (null counts as absent). */
  keyHash: z.optional(z.nullable(KeyHash)),
  /** Required with scope PROJECT (the connection and its OpenAI project or Anthropic workspace), refused otherwise. */
  connectionId: z.optional(z.nullable(idText('connectionId'))),
  projectId: z.optional(z.nullable(idText('projectId'))),
  /** Required with scope TAG, refused otherwise. */
  tag: z.optional(z.nullable(BudgetTag)),
  /** Default notify. */
  action: z.optional(Action),
  /** Default false. */
  alertOnForecast: z.optional(z.boolean('alertOnForecast must be true or false.')),
  /**
   * A `stop` budget also sets the provider's own cap (OpenRouter key limit, Anthropic workspace spend limit). Default:
   * true where Burnrate can read and restore a customer's own cap, false for an Anthropic workspace (its limit
   * replaces any of the customer's own, and a release deletes it).
   */
  nativeCap: z.optional(z.boolean('nativeCap must be true or false.')),
};

export const CreateBudgetBody = z.strictObject(fields, 'The body must be a JSON object.').check(
  z.superRefine((budget, ctx) => {
    if (budget.scope === 'KEY' && !budget.keyHash) {
      ctx.issues.push({ code: 'custom', path: ['keyHash'], message: 'keyHash is required when scope is KEY.', input: budget });
    }
    const issue = (path: string, message: string) => ctx.issues.push({ code: 'custom', path: [path], message, input: budget });
    if (budget.scope === 'PROJECT') {
      if (!budget.connectionId) issue('connectionId', 'connectionId is required when scope is PROJECT.');
      if (!budget.projectId) issue('projectId', 'projectId is required when scope is PROJECT (an OpenAI project or Anthropic workspace id).');
      if (budget.keyHash) issue('keyHash', 'keyHash is not allowed when scope is PROJECT.');
    } else {
      if (budget.connectionId) issue('connectionId', 'connectionId is only allowed when scope is PROJECT.');
      if (budget.projectId) issue('projectId', 'projectId is only allowed when scope is PROJECT.');
    }
    if (budget.scope === 'TAG') {
      if (!budget.tag) issue('tag', 'tag {name, value} is required when scope is TAG.');
      if (budget.keyHash) issue('keyHash', 'keyHash is not allowed when scope is TAG.');
    } else if (budget.tag) issue('tag', 'tag is only allowed when scope is TAG.');
    if (budget.scope === 'ACCOUNT' && budget.keyHash) {
      ctx.issues.push({
        code: 'custom',
        path: ['keyHash'],
        message: 'keyHash is not allowed when scope is ACCOUNT (an ACCOUNT budget covers every key).',
        input: budget,
      });
    }
  }),
);
export type CreateBudgetBody = z.infer<typeof CreateBudgetBody>;

/** Partial: at least one field. Each field is checked here; the merged budget is checked by `mergeBudgetPatch`. */
export const PatchBudgetBody = z
  .strictObject(
    {
      name: fields.name,
      monthlyLimit: z.optional(fields.monthlyLimit),
      alertThreshold: z.optional(fields.alertThreshold),
      scope: z.optional(fields.scope),
      keyHash: fields.keyHash,
      connectionId: fields.connectionId,
      projectId: fields.projectId,
      tag: fields.tag,
      action: fields.action,
      alertOnForecast: fields.alertOnForecast,
      nativeCap: fields.nativeCap,
    },
    'The body must be a JSON object.',
  )
  .check(atLeastOneField());
export type PatchBudgetBody = z.infer<typeof PatchBudgetBody>;

/** The budget id in the path; the domain checks it (a malformed id is an unknown id: 404). */
export const BudgetParams = z.strictObject({ id: z.string() });
export type BudgetParams = z.infer<typeof BudgetParams>;

/**
 * The stored budget with the patch applied, validated as a whole with the create schema (400 with paths otherwise).
 * Changing `scope` to ACCOUNT without naming `keyHash` drops the old key hash; `name: null` clears the name.
 */
export function mergeBudgetPatch(existing: Budget, patch: PatchBudgetBody): CreateBudgetBody {
  const merged = {
    name: patch.name !== undefined ? patch.name : existing.name,
    monthlyLimit: patch.monthlyLimit ?? Number(usdText(existing.monthlyLimitMicros)), // ≤ MAX_MONEY_USD: exact as a double
    alertThreshold: patch.alertThreshold ?? existing.alertThreshold,
    scope: patch.scope ?? existing.scope,
    keyHash: patch.keyHash !== undefined ? patch.keyHash : patch.scope !== undefined && patch.scope !== 'KEY' ? null : existing.keyHash,
    connectionId: patch.connectionId !== undefined ? patch.connectionId : patch.scope !== undefined && patch.scope !== 'PROJECT' ? null : (existing.connectionId ?? null),
    projectId: patch.projectId !== undefined ? patch.projectId : patch.scope !== undefined && patch.scope !== 'PROJECT' ? null : (existing.projectId ?? null),
    tag: patch.tag !== undefined ? patch.tag : patch.scope !== undefined && patch.scope !== 'TAG' ? null : (existing.tag ?? null),
    action: patch.action ?? existing.action ?? 'notify',
    alertOnForecast: patch.alertOnForecast ?? existing.alertOnForecast,
    ...((patch.nativeCap ?? existing.nativeCap) !== undefined ? { nativeCap: patch.nativeCap ?? existing.nativeCap } : {}),
  };
  return validate(CreateBudgetBody, merged, 'body');
}
