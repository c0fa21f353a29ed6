/**
 * Repository of enforcement: one lever state per provider target in the account's partition (`ENFORCE#T#<targetId>`),
 * every write conditioned on the version read, so acts on one target are serialised (one act is taken once even when
 * an ingest and a sync decide it at the same moment); holders released by a person for a month
 * (`ENFORCE#R#<holderKey>`), read by the same Query; and the acts' record (`ACTIONS#<a>`, one holder's on gsi1).
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SealedSecret } from '#shared/db/connections.ts';
import { db, queryAll, tableName, type Item } from '#shared/db/client.ts';
import { keys, queries } from '#shared/db/keys.ts';
import { carryOver, LEGACY_MIGRATED_ENTITY, LEGACY_STATE_ENTITY, toLegacy, type Carried, type LegacyState } from '#shared/db/enforcement-legacy.ts';
import { holderKey, type EnforcementAction, type Hold, type LeverState, type Prior, type Release, type Target } from '#shared/db/enforcement-model.ts';

const STATE_ENTITY = 'LeverState';
const RELEASE_ENTITY = 'LeverRelease';

function stateItem(accountId: string, s: LeverState): Item {
  // DynamoDB keeps no `undefined`: optional fields are left out when absent.
  const item: Item = { ...keys.leverState(accountId, s.target.id), entity: STATE_ENTITY, type: STATE_ENTITY };
  for (const [k, v] of Object.entries(s)) if (v !== undefined) item[k] = v;
  return item;
}

export function toState(item: Item): LeverState {
  return {
    target: item.target as Target,
    holds: ((item.holds as Hold[] | undefined) ?? []).map((h) => ({ ...h, reached: h.reached === true })),
    ...(item.prior !== undefined ? { prior: item.prior as Prior } : {}),
    status: item.status as LeverState['status'],
    want: item.want === 'on' ? 'on' : 'off',
    ...(item.askedCents !== undefined ? { askedCents: item.askedCents as number | null } : {}),
    ...(item.limitCents !== undefined ? { limitCents: item.limitCents as number | null } : {}),
    ...(item.enforcing !== undefined ? { enforcing: item.enforcing === true } : {}),
    ...(typeof item.capId === 'string' ? { capId: item.capId } : {}),
    ...(typeof item.unavailable === 'string' ? { unavailable: item.unavailable } : {}),
    ...(Array.isArray(item.letGo) && item.letGo.length > 0 ? { letGo: item.letGo as LeverState['letGo'] } : {}),
    ...(Array.isArray(item.migratedFrom) && item.migratedFrom.length > 0 ? { migratedFrom: item.migratedFrom as string[] } : {}),
    period: item.period as string,
    since: item.since as string,
    detail: (item.detail as string | undefined) ?? '',
    v: Number(item.v ?? 0),
  };
}

export interface EnforcementItems {
  states: LeverState[];
  releases: Release[];
}

/**
 * Every lever state and release of the account: ONE Query (strongly consistent unless `consistent` is false). Items of
 * the earlier layout found there are carried over (shared/db/enforcement-legacy.ts): written by a consistent read (the
 * writers' read), in memory only by an eventually consistent one or with `persist: false` (readers that only show
 * states: their functions may not write).
 */
export async function listEnforcement(accountId: string, consistent = true, options: { now?: Date; persist?: boolean; attempt?: number } = {}): Promise<EnforcementItems> {
  const now = options.now ?? new Date();
  const attempt = options.attempt ?? 0;
  const q = queries.accountItems(accountId, 'ENFORCE');
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': q.pk, ':prefix': q.skPrefix },
    ConsistentRead: consistent,
  });
  const found: EnforcementItems = {
    states: items.filter((i) => i.entity === STATE_ENTITY).map(toState),
    releases: items.filter((i) => i.entity === RELEASE_ENTITY).map((i) => ({ holder: i.holder as Release['holder'], period: i.period as string, by: i.by as string, at: i.at as string })),
  };
  const legacy = items.filter((i) => i.entity === LEGACY_STATE_ENTITY).map(toLegacy);
  if (legacy.length === 0) return found;
  const carried = carryAll(legacy, found, now);
  if (!consistent || options.persist === false) return carried.view;
  // Written target by target, each conditioned on the state read; one that lost a race is read again.
  const lost = await persistCarried(accountId, carried.targets, now);
  return lost && attempt < 3 ? listEnforcement(accountId, true, { now, attempt: attempt + 1 }) : carried.view;
}

/** The carry-over of every old item found (pure): per target, and the view the readers get. */
function carryAll(legacy: LegacyState[], found: EnforcementItems, now: Date) {
  const month = now.toISOString().slice(0, 7);
  const at = now.toISOString();
  const byTarget = new Map<string, LegacyState[]>();
  for (const o of legacy) byTarget.set(o.target.id, [...(byTarget.get(o.target.id) ?? []), o]);
  const states = new Map(found.states.map((s) => [s.target.id, s]));
  const releases = [...found.releases];
  const targets: Array<{ olds: LegacyState[]; existing: LeverState | undefined; carried: Carried }> = [];
  for (const [id, olds] of byTarget) {
    const existing = states.get(id);
    const carried = carryOver(olds, existing, month, at);
    targets.push({ olds, existing, carried });
    if (carried.state) states.set(id, carried.state);
    for (const r of carried.releases) if (!releases.some((x) => x.holder.kind === r.holder.kind && x.holder.id === r.holder.id && x.period === r.period)) releases.push(r);
  }
  return { targets, view: { states: [...states.values()], releases } };
}

/** Writes the carried states, the releases, then the markers that replace the old items. True: a state lost a race. */
async function persistCarried(accountId: string, targets: ReturnType<typeof carryAll>['targets'], now: Date): Promise<boolean> {
  const expiresAt = Math.ceil(now.getTime() / 1000) + 30 * 86_400;
  let lost = false;
  for (const { olds, existing, carried } of targets) {
    if (carried.state && carried.state !== existing && !(await writeState(accountId, existing, carried.state))) {
      lost = true;
      continue;
    }
    for (const r of carried.releases) {
      await conditionalPut({ ...keys.leverRelease(accountId, `${r.holder.kind}:${r.holder.id}`), entity: RELEASE_ENTITY, type: RELEASE_ENTITY, ...r }, 'attribute_not_exists(pk)');
    }
    for (const o of olds) {
      const key = keys.legacyEnforcementState(accountId, o.budgetId, o.target.id);
      await conditionalPut({ ...key, entity: LEGACY_MIGRATED_ENTITY, type: LEGACY_MIGRATED_ENTITY, migratedTo: o.target.id, at: now.toISOString(), expiresAt }, 'entity = :old', { ':old': LEGACY_STATE_ENTITY });
    }
  }
  return lost;
}

async function conditionalPut(item: Item, condition: string, values?: Record<string, unknown>): Promise<void> {
  try {
    await db().send(new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: condition, ...(values ? { ExpressionAttributeValues: values } : {}) }));
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
  }
}

/** Whether Burnrate holds (or is putting back) anything on the connection's targets: one Query. */
export async function heldOn(accountId: string, connectionId: string): Promise<boolean> {
  const { states } = await listEnforcement(accountId);
  return states.some((s) => s.target.connectionId === connectionId && (s.holds.length > 0 || (s.status !== 'released' && !(s.status === 'failed' && s.want === 'on'))));
}

/** The lever states alone (one Query). */
export async function listStates(accountId: string, consistent = true): Promise<LeverState[]> {
  return (await listEnforcement(accountId, consistent)).states;
}

/**
 * Writes `next` (its `v` one past `previous`) if the stored state is still `previous` (or, with none, does not exist
 * yet): false when another writer got there first.
 */
export async function writeState(accountId: string, previous: LeverState | undefined, next: LeverState): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: stateItem(accountId, next),
        ConditionExpression: previous && previous.v > 0 ? 'v = :v' : 'attribute_not_exists(pk)',
        ...(previous && previous.v > 0 ? { ExpressionAttributeValues: { ':v': previous.v } } : {}),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Records that a person released `release.holder` for the rest of `release.period` (the latest release wins). */
export async function putRelease(accountId: string, release: Release): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.leverRelease(accountId, `${release.holder.kind}:${release.holder.id}`), entity: RELEASE_ENTITY, type: RELEASE_ENTITY, ...release } }));
}

export async function putActions(accountId: string, actions: EnforcementAction[]): Promise<void> {
  await Promise.all(
    actions.map((action) =>
      db().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...keys.enforcementAction(accountId, action.id),
            ...keys.enforcementActionIndex(accountId, action.holder.id, action.id),
            entity: 'EnforcementAction',
            type: 'EnforcementAction',
            ...action,
          },
        }),
      ),
    ),
  );
}

export function toAction(item: Item): EnforcementAction {
  const budgetId = (item.budgetId as string | null | undefined) ?? null;
  return {
    id: item.id as string,
    budgetId,
    holder: (item.holder as EnforcementAction['holder'] | undefined) ?? { kind: 'budget', id: budgetId ?? '' },
    kind: item.kind as EnforcementAction['kind'],
    provider: item.provider as string,
    keyHash: (item.keyHash as string | null) ?? null,
    projectId: (item.projectId as string | null) ?? null,
    reason: item.reason as EnforcementAction['reason'],
    actor: item.actor as string,
    result: item.result === 'failed' ? 'failed' : 'ok',
    detail: (item.detail as string) ?? '',
    holderName: typeof item.holderName === 'string' ? item.holderName : null,
    targetName: typeof item.targetName === 'string' ? item.targetName : null,
    at: item.at as string,
  };
}

/** The filters of the acts' list (GET /enforcement-actions). */
export interface ActionFilter {
  provider?: string;
  result?: 'ok' | 'failed';
}

/**
 * A filtered page reads this many acts in its ONE Query (a few hundred bytes each: well under DynamoDB's 1 MB a
 * Query): the page is filled up to `limit` from them; when fewer match, the cursor still says more may follow.
 */
export const FILTERED_READ = 500;

/** The start key of the page after `item`: its table key, and its gsi1 key when listing one holder's acts. */
const actionPosition = (item: Item, onIndex: boolean): Record<string, unknown> => ({
  pk: item.pk,
  sk: item.sk,
  ...(onIndex ? { gsi1pk: item.gsi1pk, gsi1sk: item.gsi1sk } : {}),
});

/**
 * One page of acts, newest first: the account's (base table) or one holder's (gsi1), in ONE Query. With a filter
 * (provider, result) the Query filters as it reads, FILTERED_READ acts at most: the page holds up to `limit` of the
 * matches and its cursor starts after the last one shown; a page with fewer (the read ran out before the list did)
 * still carries a cursor (docs/features/budgets-and-alerts.md).
 */
export async function listActions(
  accountId: string,
  holderId: string | undefined,
  limit: number,
  startKey?: Record<string, unknown>,
  filter: ActionFilter = {},
): Promise<{ items: EnforcementAction[]; lastKey?: Record<string, unknown> }> {
  const base = queries.enforcementActions(accountId);
  const terms: string[] = [];
  const values: Record<string, unknown> = {};
  if (filter.provider) {
    terms.push('#provider = :provider');
    values[':provider'] = filter.provider;
  }
  if (filter.result) {
    terms.push('#result = :result');
    values[':result'] = filter.result;
  }
  const filtering = terms.length
    ? {
        FilterExpression: terms.join(' AND '),
        ExpressionAttributeNames: { ...(filter.provider ? { '#provider': 'provider' } : {}), ...(filter.result ? { '#result': 'result' } : {}) },
      }
    : {};
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...(holderId
        ? { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ...values, ':pk': queries.budgetEnforcementActions(accountId, holderId).gsi1pk } }
        : { KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ...values, ':pk': base.pk, ':prefix': base.skPrefix } }),
      ...filtering,
      ScanIndexForward: false,
      Limit: terms.length ? Math.max(FILTERED_READ, limit) : limit,
      ExclusiveStartKey: startKey,
    }),
  );
  const items = res.Items ?? [];
  const page = items.slice(0, limit);
  // More may follow: matches read but not shown (start after the last one shown), or a list not read to its end.
  const lastKey = items.length > limit ? actionPosition(page.at(-1)!, Boolean(holderId)) : res.LastEvaluatedKey;
  return { items: page.map(toAction), ...(lastKey ? { lastKey } : {}) };
}

/** A deleted connection's levers still to put back (the sync worker opens its sealed admin key once more). */
export interface ReleaseJob {
  connectionId: string;
  provider: string;
  name: string;
  secret: SealedSecret;
  at: string;
}

export async function putReleaseJob(accountId: string, job: ReleaseJob): Promise<void> {
  const expiresAt = Math.ceil(Date.parse(job.at) / 1000) + 7 * 86_400;
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.leverReleaseJob(accountId, job.connectionId), entity: 'LeverReleaseJob', type: 'LeverReleaseJob', ...job, expiresAt } }));
}

export async function getReleaseJob(accountId: string, connectionId: string): Promise<ReleaseJob | undefined> {
  const res = await db().send(new GetCommand({ TableName: tableName(), Key: keys.leverReleaseJob(accountId, connectionId), ConsistentRead: true }));
  const i = res.Item;
  return i ? { connectionId: i.connectionId as string, provider: i.provider as string, name: i.name as string, secret: i.secret as SealedSecret, at: i.at as string } : undefined;
}

export async function deleteReleaseJob(accountId: string, connectionId: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.leverReleaseJob(accountId, connectionId) }));
}
