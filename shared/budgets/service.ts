/**
 * The budgets domain: CRUD, with each budget's month-to-date spend computed at read time (ACCOUNT: the account's
 * month; KEY: that key's month) from ONE BatchGetItem (`loadSpend`), whatever the number of budgets.
 * Money in µ$ inside, dollars out (`budgetView`).
 */
import { budgetView, nextUpdatedAt, type Budget } from '#shared/alerting/model.ts';
import { loadSpend, type SpendSnapshot } from '#shared/alerting/spend.ts';
import { mergeBudgetPatch, type CreateBudgetBody, type PatchBudgetBody } from '#shared/budgets/schemas.ts';
import * as repo from '#shared/db/budgets.ts';
import { Conflict, NotFound, ValidationError } from '#shared/http/errors.ts';
import { isId, newId } from '#shared/ids.ts';
import { usdToMicros } from '#shared/pricing/money.ts';

export const MAX_BUDGETS_PER_ACCOUNT = 100;

export type BudgetView = ReturnType<typeof budgetView>;

const budgetNotFound = () => new NotFound('The budget does not exist.');
const noSuchKey = () =>
  new ValidationError('keyHash does not name a key of this account.', [{ path: 'keyHash', message: 'No such key in this account.' }]);
const editConflict = () =>
  new Conflict('The budget was changed by another request meanwhile. Read it again and retry.', 'edit-conflict');

/** The key a budget watches, or null for ACCOUNT (the schema guarantees keyHash iff KEY). */
const watchedKey = (input: CreateBudgetBody): string | null => (input.scope === 'KEY' ? (input.keyHash ?? null) : null);

const spendOf = (budget: Budget, spend: SpendSnapshot): number =>
  budget.scope === 'KEY' && budget.keyHash ? spend.keyMonth(budget.keyHash) : spend.accountMonth();
const forecastOf = (budget: Budget, spend: SpendSnapshot): number =>
  budget.scope === 'KEY' && budget.keyHash ? spend.keyForecast(budget.keyHash) : spend.accountForecast();
const view = (budget: Budget, spend: SpendSnapshot) => budgetView(budget, spendOf(budget, spend), forecastOf(budget, spend));

/** The spend snapshot with the watched key's item (which also tells whether the key exists): ONE BatchGetItem. */
async function spendFor(accountId: string, keyHash: string | null, now: Date): Promise<SpendSnapshot> {
  const spend = await loadSpend(accountId, now, { keyHashes: keyHash ? [keyHash] : [] });
  if (keyHash && !spend.hasKey(keyHash)) throw noSuchKey();
  return spend;
}

/** Every budget with its spend, newest first: ONE Query + ONE BatchGetItem. */
export async function listBudgets(accountId: string, now = new Date()): Promise<{ items: BudgetView[]; nextCursor: null }> {
  const budgets = await repo.listBudgets(accountId);
  if (budgets.length === 0) return { items: [], nextCursor: null };
  const keyHashes = budgets.flatMap((b) => (b.scope === 'KEY' && b.keyHash ? [b.keyHash] : []));
  const spend = await loadSpend(accountId, now, { keyHashes });
  return { items: budgets.map((b) => view(b, spend)), nextCursor: null };
}

/**
 * Creates a budget, up to MAX_BUDGETS_PER_ACCOUNT (409 past it), exactly even under racing creates: the account's
 * counter is taken in the same transaction as the budget (shared/db/caps.ts).
 */
export async function createBudget(accountId: string, input: CreateBudgetBody, now = new Date()): Promise<BudgetView> {
  const keyHash = watchedKey(input);
  const spend = await spendFor(accountId, keyHash, now);
  const at = now.toISOString();
  const budget: Budget = {
    id: newId('budget'),
    name: input.name ?? null,
    monthlyLimitMicros: usdToMicros(input.monthlyLimit),
    alertThreshold: input.alertThreshold,
    scope: input.scope,
    keyHash,
    alertOnForecast: input.alertOnForecast ?? false,
    createdAt: at,
    updatedAt: at,
  };
  if ((await repo.createBudget(accountId, budget, MAX_BUDGETS_PER_ACCOUNT)) === 'cap') {
    throw new Conflict(`An account can have at most ${MAX_BUDGETS_PER_ACCOUNT} budgets. Delete one first.`, 'budget-limit');
  }
  return view(budget, spend);
}

/** Applies a partial update (the merged budget is validated as a whole); a concurrent edit → 409. */
export async function updateBudget(accountId: string, id: string, patch: PatchBudgetBody, now = new Date()): Promise<BudgetView> {
  if (!isId('budget', id)) throw budgetNotFound();
  const existing = await repo.getBudget(accountId, id);
  if (!existing) throw budgetNotFound();
  const input = mergeBudgetPatch(existing, patch);
  const keyHash = watchedKey(input);
  const spend = await spendFor(accountId, keyHash, now);
  const budget: Budget = {
    ...existing,
    name: input.name ?? null,
    monthlyLimitMicros: usdToMicros(input.monthlyLimit),
    alertThreshold: input.alertThreshold,
    scope: input.scope,
    keyHash,
    alertOnForecast: input.alertOnForecast ?? false,
    updatedAt: nextUpdatedAt(now, existing.updatedAt),
  };
  const outcome = await repo.replaceBudget(accountId, budget, existing.updatedAt);
  if (outcome === 'missing') throw budgetNotFound();
  if (outcome === 'conflict') throw editConflict();
  return view(budget, spend);
}

/** An id of another account, or one that is not a budget id at all, is unknown: 404. */
export async function deleteBudget(accountId: string, id: string): Promise<void> {
  if (!isId('budget', id) || !(await repo.deleteBudget(accountId, id))) throw budgetNotFound();
}
