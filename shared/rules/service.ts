/**
 * The alert-rules domain: CRUD. Configs are stored as the API gave them (dollars, ≤ 6 decimals: model.ts);
 * evaluation after ingestion reads the same items (shared/db/alerts.ts).
 */
import { nextUpdatedAt, ruleView, type Rule } from '#shared/alerting/model.ts';
import { getProviderKey } from '#shared/db/discovered-keys.ts';
import * as repo from '#shared/db/rules.ts';
import { Conflict, NotFound, ValidationError } from '#shared/http/errors.ts';
import { isId, newId } from '#shared/ids.ts';
import { mergeRulePatch, type CreateRuleBody, type PatchRuleBody } from '#shared/rules/schemas.ts';

export const MAX_RULES_PER_ACCOUNT = 100;

export type RuleView = ReturnType<typeof ruleView>;

const ruleNotFound = () => new NotFound('The alert rule does not exist.');
const editConflict = () =>
  new Conflict('The alert rule was changed by another request meanwhile. Read it again and retry.', 'edit-conflict');

/** The key a cost_threshold rule is limited to, if any. */
const keyOf = (rule: Pick<Rule, 'type' | 'config'>): string | undefined =>
  rule.type === 'cost_threshold' && 'keyHash' in rule.config ? rule.config.keyHash : undefined;

/** A rule may only watch a key of its own account (one GetItem). */
async function assertKeyExists(accountId: string, keyHash: string): Promise<void> {
  if (await getProviderKey(accountId, keyHash)) return;
  throw new ValidationError('config.keyHash does not name a key of this account.', [
    { path: 'config.keyHash', message: 'No such key in this account.' },
  ]);
}

/** The rule fields a validated body sets. */
function fieldsOf(input: CreateRuleBody): Pick<Rule, 'type' | 'name' | 'config' | 'channels' | 'isActive'> {
  return { type: input.type, name: input.name, config: input.config, channels: input.channels, isActive: input.isActive ?? true };
}

/** Every rule, newest first: ONE Query. */
export async function listRules(accountId: string): Promise<{ items: RuleView[]; nextCursor: null }> {
  const rules = await repo.listRules(accountId);
  return { items: rules.map(ruleView), nextCursor: null };
}

/**
 * Creates a rule, up to MAX_RULES_PER_ACCOUNT (409 past it), exactly even under racing creates: the account's
 * counter is taken in the same transaction as the rule (shared/db/caps.ts).
 */
export async function createRule(accountId: string, input: CreateRuleBody, now = new Date()): Promise<RuleView> {
  const fields = fieldsOf(input);
  const keyHash = keyOf(fields);
  if (keyHash) await assertKeyExists(accountId, keyHash);
  const at = now.toISOString();
  const rule: Rule = { id: newId('rule'), ...fields, createdAt: at, updatedAt: at, lastTriggeredAt: null };
  if ((await repo.createRule(accountId, rule, MAX_RULES_PER_ACCOUNT)) === 'cap') {
    throw new Conflict(`An account can have at most ${MAX_RULES_PER_ACCOUNT} alert rules. Delete one first.`, 'rule-limit');
  }
  return ruleView(rule);
}

type Attempt = { rule: Rule; outcome: Awaited<ReturnType<typeof repo.replaceRule>> };

/** Reads the rule, applies the patch (the merged rule is validated as a whole) and writes it if nobody else did. */
async function attemptUpdate(accountId: string, id: string, patch: PatchRuleBody, now: Date): Promise<Attempt> {
  const existing = await repo.getRule(accountId, id);
  if (!existing) throw ruleNotFound();
  const fields = fieldsOf(mergeRulePatch(existing, patch));
  const keyHash = keyOf(fields);
  // Keys are never deleted: only a key the rule did not watch before needs checking.
  if (keyHash && keyHash !== keyOf(existing)) await assertKeyExists(accountId, keyHash);
  const rule: Rule = { ...existing, ...fields, updatedAt: nextUpdatedAt(now, existing.updatedAt) };
  return { rule, outcome: await repo.replaceRule(accountId, rule, existing) };
}

/**
 * Applies a partial update; a concurrent edit → 409. A concurrent FIRING (only `lastTriggeredAt` moved) is no
 * conflict for the client: the patch is re-applied once to the fresh rule.
 */
export async function updateRule(accountId: string, id: string, patch: PatchRuleBody, now = new Date()): Promise<RuleView> {
  if (!isId('rule', id)) throw ruleNotFound();
  let attempt = await attemptUpdate(accountId, id, patch, now);
  if (attempt.outcome === 'triggered') attempt = await attemptUpdate(accountId, id, patch, now);
  if (attempt.outcome === 'missing') throw ruleNotFound();
  if (attempt.outcome !== 'updated') throw editConflict();
  return ruleView(attempt.rule);
}

/** An id of another account, or one that is not a rule id at all, is unknown: 404. */
export async function deleteRule(accountId: string, id: string): Promise<void> {
  if (!isId('rule', id) || !(await repo.deleteRule(accountId, id))) throw ruleNotFound();
}
