/**
 * The budgets domain: CRUD, with each budget's month-to-date spend computed at read time (ACCOUNT: the account's
 * month; KEY: that key's month) from ONE BatchGetItem (`loadSpend`), whatever the number of budgets.
 * Money in µ$ inside, dollars out (`budgetView`).
 */
import { budgetView, nextUpdatedAt, type Budget } from '#shared/alerting/model.ts';
import { keyItemForecast, loadSpend, type SpendSnapshot } from '#shared/alerting/spend.ts';
import { mergeBudgetPatch, type CreateBudgetBody, type PatchBudgetBody } from '#shared/budgets/schemas.ts';
import * as repo from '#shared/db/budgets.ts';
import { Conflict, NoLever, NotFound, ValidationError } from '#shared/http/errors.ts';
import { isId, newId } from '#shared/ids.ts';
import { usdToMicros } from '#shared/pricing/money.ts';
import { providerName } from '#shared/providers/names.ts';
import { listStates } from '#shared/db/enforcement.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import { coverageOf, enforceWithoutKeys, enforcementView, holdBudget, leverName, loadAccount, spendOf as coveredSpend, type AccountView } from '#shared/enforcement/service.ts';
import { holderKey } from '#shared/db/enforcement-model.ts';
import { isoMonth } from '#shared/time/periods.ts';

export const MAX_BUDGETS_PER_ACCOUNT = 100;

export type BudgetView = ReturnType<typeof budgetView>;

const budgetNotFound = () => new NotFound('The budget does not exist.');
const noSuchKey = () =>
  new ValidationError('keyHash does not name a key of this account.', [{ path: 'keyHash', message: 'No such key in this account.' }]);
const editConflict = () =>
  new Conflict('The budget was changed by another request meanwhile. Read it again and retry.', 'edit-conflict');

/** The key a budget watches, or null for ACCOUNT (the schema guarantees keyHash iff KEY). */
const watchedKey = (input: CreateBudgetBody): string | null => (input.scope === 'KEY' ? (input.keyHash ?? null) : null);
const projectOf = (input: CreateBudgetBody) => ({
  ...(input.scope === 'PROJECT' ? { connectionId: input.connectionId ?? null, projectId: input.projectId ?? null } : { connectionId: null, projectId: null }),
  tag: input.scope === 'TAG' ? (input.tag ?? null) : null,
});

const spendOf = (budget: Budget, spend: SpendSnapshot): number =>
  budget.scope === 'KEY' && budget.keyHash ? spend.keyMonth(budget.keyHash) : spend.accountMonth();
const forecastOf = (budget: Budget, spend: SpendSnapshot): number =>
  budget.scope === 'KEY' && budget.keyHash ? spend.keyForecast(budget.keyHash) : spend.accountForecast();
/** What the enforcement view of budgets needs beyond spend: keys, connections, states (only when a budget acts or covers a project). */
type Extra = Pick<AccountView, 'keys' | 'connections' | 'states' | 'releases' | 'month'> | undefined;

/** A PROJECT budget's forecast: the sum of its project's keys' forecasts (never the account's). */
const projectForecast = (budget: Budget, extra: NonNullable<Extra>, now: Date) =>
  extra.keys.filter((k) => k.connectionId === budget.connectionId && k.projectId === budget.projectId).reduce((n, k) => n + keyItemForecast(k.item, now), 0);

const view = (budget: Budget, spend: SpendSnapshot, extra?: Extra, now = new Date()) => {
  const enforcement = budget.action === 'stop' && extra ? enforcementView(budget, extra, leverName(budget, extra)) : undefined;
  if (budget.scope === 'TAG') {
    const tagSpend = extra ? coveredSpend(budget, { keys: extra.keys, accountMonthMicros: 0 }) : 0;
    return budgetView(budget, tagSpend, tagSpend, enforcement);
  }
  if (budget.scope === 'PROJECT') {
    const projectSpend = extra ? coveredSpend(budget, { keys: extra.keys, accountMonthMicros: 0 }) : 0;
    return budgetView(budget, projectSpend, extra ? Math.max(projectSpend, projectForecast(budget, extra, now)) : projectSpend, enforcement);
  }
  return budgetView(budget, spendOf(budget, spend), forecastOf(budget, spend), enforcement);
};

const needsExtra = (budgets: Budget[]) => budgets.some((b) => b.action === 'stop' || b.scope === 'PROJECT' || b.scope === 'TAG');

async function loadExtra(accountId: string, now: Date, readOnly = false): Promise<Extra> {
  const view = await loadAccount(accountId, now, undefined, readOnly);
  return { keys: view.keys, connections: view.connections, states: view.states, releases: view.releases, month: view.month };
}

/**
 * A stop budget must have a lever that can act (400 naming why not, and what would work); a PROJECT budget names a
 * connection of this account (404 otherwise) and one of its projects.
 */
async function checkLevers(accountId: string, budget: Budget, now: Date): Promise<Extra> {
  if (budget.action !== 'stop' && budget.scope !== 'PROJECT' && budget.scope !== 'TAG') return undefined;
  const account = await loadAccount(accountId, now);
  const refuse = (message: string, path = 'action') => new ValidationError(message, [{ path, message }]);
  const offState = (connectionId: string) => {
    const c = account.connections.get(connectionId);
    return c && c.enforcement !== 'on'
      ? refuse(`Burnrate may not act on the ${providerName(c.provider)} connection "${c.name}": its enforcement is off. An admin turns it on (PATCH /connections/${c.id} {"enforcement": "on"}), or keep this budget's action notify.`)
      : undefined;
  };
  if (budget.scope === 'PROJECT') {
    const conn = budget.connectionId ? account.connections.get(budget.connectionId) : undefined;
    if (!conn) throw new NotFound('The connection does not exist.');
    const known = account.keys.some((k) => k.connectionId === conn.id && k.projectId === budget.projectId);
    if (!known) throw refuse(`projectId does not name a project of the ${providerName(conn.provider)} connection "${conn.name}" with keys (an OpenAI project or Anthropic workspace id, as GET /keys shows under project).`, 'projectId');
    if (budget.action === 'stop') {
      const offer = leverOffer(conn.provider);
      if (!offer?.projectLimit && !offer?.keySwitch) throw refuse(`${providerName(conn.provider)} offers no lever for a project: keep this budget's action notify.`);
      const off = offState(conn.id);
      if (off) throw off;
    }
  } else if (budget.scope === 'KEY') {
    const key = account.keys.find((k) => k.hash === budget.keyHash);
    if (key && key.source === 'connection' && budget.action === 'stop') {
      const p = providerName(key.provider);
      if (!key.keyId) throw new NoLever(`${key.name} is ${p} usage without a key (the Console, the workbench): no key can be switched off for it. Keep this budget's action notify, or cover the usage with an ACCOUNT budget.`);
      if (!key.connectionId || !account.connections.has(key.connectionId)) throw new NoLever(`Key ${key.name} belongs to a ${p} connection that was deleted: Burnrate can no longer act on it. Connect the organization again, or keep this budget's action notify.`);
      if (key.status === 'archived' || key.status === 'expired' || key.status === 'deleted') throw new NoLever(`Key ${key.name} is ${key.status} at ${p}: it can't be used or switched any more, so there is nothing to stop. Keep this budget's action notify.`);
      const offer = leverOffer(key.provider);
      if (!offer?.keySwitch) {
        const project = key.projectId ? ` (scope PROJECT, connectionId ${key.connectionId}, projectId ${key.projectId})` : '';
        throw refuse(
          `${providerName(key.provider)} can pause no single key: a budget that stops this key's spend covers its project${project}, whose hard spend limit ${providerName(key.provider)} enforces itself. Or keep this budget's action notify.`,
        );
      }
      const off = key.connectionId ? offState(key.connectionId) : undefined;
      if (off) throw off;
    }
  } else if (budget.action === 'stop') {
    const b = coverageOf(budget, { ...account, budgets: [budget] });
    const on = b.targets.filter((t) => t.kind === 'reporter' || (t.connectionId && account.connections.get(t.connectionId)?.enforcement === 'on'));
    if (on.length === 0) {
      throw refuse('Nothing in this account offers a lever: no key sends events through the reporter and no connection with a key switch has enforcement on (PATCH /connections/:id {"enforcement": "on"}). Keep this budget\'s action notify.');
    }
  }
  return { keys: account.keys, connections: account.connections, states: account.states, releases: account.releases, month: account.month };
}

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
  const [spend, extra] = await Promise.all([loadSpend(accountId, now, { keyHashes }), needsExtra(budgets) ? loadExtra(accountId, now, true) : undefined]);
  return { items: budgets.map((b) => view(b, spend, extra)), nextCursor: null };
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
    ...projectOf(input),
    action: input.action ?? 'notify',
    alertOnForecast: input.alertOnForecast ?? false,
    ...(input.nativeCap !== undefined ? { nativeCap: input.nativeCap } : {}),
    createdAt: at,
    updatedAt: at,
  };
  const extra = await checkLevers(accountId, budget, now);
  if ((await repo.createBudget(accountId, budget, MAX_BUDGETS_PER_ACCOUNT)) === 'cap') {
    throw new Conflict(`An account can have at most ${MAX_BUDGETS_PER_ACCOUNT} budgets. Delete one first.`, 'budget-limit');
  }
  return afterChange(accountId, budget, spend, extra, now);
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
    ...projectOf(input),
    action: input.action ?? 'notify',
    alertOnForecast: input.alertOnForecast ?? false,
    ...(input.nativeCap !== undefined ? { nativeCap: input.nativeCap } : {}),
    updatedAt: nextUpdatedAt(now, existing.updatedAt),
  };
  const extra = await checkLevers(accountId, budget, now);
  const outcome = await repo.replaceBudget(accountId, budget, existing.updatedAt);
  if (outcome === 'missing') throw budgetNotFound();
  if (outcome === 'conflict') throw editConflict();
  return afterChange(accountId, budget, spend, extra, now);
}

/**
 * After a save: the enforcement it changes (a stop budget past its limit stops, a raise or `notify` releases, a
 * project's limit is set or follows) — reporter blocks at once, the levers behind admin keys by a sync queued now.
 */
async function afterChange(accountId: string, budget: Budget, spend: SpendSnapshot, extra: Extra, now: Date): Promise<BudgetView> {
  const mine = holderKey({ kind: 'budget', id: budget.id });
  const hadStates = !extra && (await listStates(accountId)).some((s) => s.holds.some((h) => holderKey(h) === mine));
  if (budget.action !== 'stop' && !hadStates && budget.scope !== 'PROJECT' && budget.scope !== 'TAG') return view(budget, spend, extra);
  await enforceWithoutKeys(accountId, now);
  const fresh = budget.action === 'stop' || budget.scope === 'PROJECT' || budget.scope === 'TAG' ? await loadExtra(accountId, now) : undefined;
  return view(budget, spend, fresh, now);
}

/** POST /budgets/{id}/release: holds the budget's levers off for the rest of the month (404 for another account's id). */
export async function releaseBudget(accountId: string, id: string, userId: string, now = new Date()): Promise<BudgetView> {
  if (!isId('budget', id)) throw budgetNotFound();
  const budget = await repo.getBudget(accountId, id);
  if (!budget) throw budgetNotFound();
  const before = await loadExtra(accountId, now);
  const status = budget.action === 'stop' && before ? enforcementView(budget, before, null).status : 'armed';
  if (status !== 'stopped' && status !== 'failed') {
    throw new Conflict(`${budget.name ? `"${budget.name}"` : 'The budget'} is not stopped (it is ${budget.action === 'stop' ? status : 'a notify budget'}): there is nothing to release.`, 'not-stopped');
  }
  await holdBudget(accountId, budget, userId, now);
  const [spend, extra] = await Promise.all([spendFor(accountId, budget.scope === 'KEY' ? budget.keyHash : null, now), loadExtra(accountId, now)]);
  return view(budget, spend, extra, now);
}

/** An id of another account, or one that is not a budget id at all, is unknown: 404. */
export async function deleteBudget(accountId: string, id: string, now = new Date()): Promise<void> {
  if (!isId('budget', id) || !(await repo.deleteBudget(accountId, id))) throw budgetNotFound();
  // Whatever it stopped is released (its states outlive it until then).
  const mine = holderKey({ kind: 'budget', id });
  if ((await listStates(accountId)).some((s) => s.holds.some((h) => holderKey(h) === mine) || s.letGo?.some((l) => holderKey(l.hold) === mine))) await enforceWithoutKeys(accountId, now);
}
