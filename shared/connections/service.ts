/**
 * The Connections API (docs/features/connections.md): create with ONE provider check, list, get, patch
 * (rename, rotate the admin key, pause/resume), delete (the sealed admin key goes, imported spend and keys stay),
 * sync now (at most once a minute), reconciliation. The admin key is never returned, logged or put in an error.
 */
import { isId, newId } from '#shared/ids.ts';
import { HttpError, NotFound, Conflict, TooManyRequests, ValidationError } from '#shared/http/errors.ts';
import { logger } from '#shared/http/logger.ts';
import { microsToUsd } from '#shared/pricing/money.ts';
import { daysBetween, isoDate, parseDate } from '#shared/time/periods.ts';
import { breakdownRange } from '#shared/http/range.ts';
import {
  claimManualSync,
  deleteConnection as removeConnection,
  getConnection,
  listConnections as loadConnections,
  putNewConnection,
  replaceConnection,
  type Connection,
} from '#shared/db/connections.ts';
import { loadReconDetails } from '#shared/db/settlement.ts';
import { firstReadableDay, providerClient } from '#shared/connections/client.ts';
import { ProviderLimitExceeded, ProviderRefused } from '#shared/connections/http.ts';
import type { Provider } from '#shared/connections/model.ts';
import { sealSecret } from '#shared/connections/secrets.ts';
import { providerName } from '#shared/connections/alerts.ts';
import { queueSync } from '#shared/connections/queue.ts';
import { heldOn, putReleaseJob } from '#shared/db/enforcement.ts';
import { compareOrganizations, organizationOf, storedOrganization } from '#shared/connections/organization.ts';
import type { CreateConnectionBody, PatchConnectionBody, ReconciliationQuery } from '#shared/connections/schemas.ts';

export const MAX_RECONCILIATION_DAYS = 92;

/** 400 `/problems/connection-refused`: the provider refused the key (its words, redacted, in `detail`). */
export class ConnectionRefused extends HttpError {
  constructor(detail: string) {
    super(400, 'connection-refused', 'The provider refused the admin key.', detail, [{ path: 'adminKey', message: detail }]);
  }
}

/** 502 `/problems/provider-unavailable`: the provider could not be reached or answered 5xx; nothing was stored. */
export class ProviderUnavailableError extends HttpError {
  constructor(provider: Provider) {
    super(502, 'provider-unavailable', 'The provider could not be reached.', `${providerName(provider)} could not be reached or answered with an error; nothing was stored. Try again in a minute.`);
  }
}

/**
 * 502 `/problems/provider-unavailable` whose detail names the bound a provider's answer met (pages.ts): a body over
 * 32 MB, a list past 1,000 pages or 100,000 items, a page cursor that repeats. Nothing was stored.
 */
export class ProviderAnswerRefused extends HttpError {
  constructor(provider: Provider, error: ProviderLimitExceeded) {
    super(502, 'provider-unavailable', 'The provider\'s answer was refused.', `${error.message.replace(/^The provider\b/, providerName(provider))} Nothing was stored.`);
  }
}

/** Whether `key` looks like an admin key of `provider`; else what it looks like instead (the 400's words). */
export function adminKeyProblem(provider: Provider, key: string): string | undefined {
  if (/\s/.test(key)) return 'adminKey must not contain spaces or line breaks.';
  if (provider === 'openrouter') {
    // A management key and an inference key look alike (sk-or-v1- + 64 hex): the check call tells them apart.
    if (/^sk-or-v1-[0-9a-f]{64}$/.test(key)) return undefined;
    if (key.startsWith('sk-')) return 'This is not an OpenRouter key: an OpenRouter management key is sk-or-v1- followed by 64 hexadecimal characters (openrouter.ai → Settings → Management keys).';
    return 'An OpenRouter management key is sk-or-v1- followed by 64 hexadecimal characters.';
  }
  if (provider === 'openai') {
    if (key.startsWith('sk-admin-')) return undefined;
    if (key.startsWith('sk-ant-')) return 'This is an Anthropic key; an OpenAI admin key starts with sk-admin-.';
    if (key.startsWith('sk-proj-') || key.startsWith('sk-svcacct-') || key.startsWith('sk-')) {
      return 'This is an OpenAI API key for inference (sk-proj-…, sk-svcacct-…), not an admin key: an organization owner creates an admin key (sk-admin-…) under Organization settings → Admin keys; read-only is enough.';
    }
    return 'An OpenAI admin key starts with sk-admin-.';
  }
  if (key.startsWith('sk-ant-admin')) return undefined;
  if (key.startsWith('sk-ant-api')) {
    return 'This is an Anthropic API key for inference (sk-ant-api…), not an admin key: an organization admin creates an Admin API key (sk-ant-admin…) in the Console under Settings → Admin keys.';
  }
  if (key.startsWith('sk-admin-') || key.startsWith('sk-')) return 'This looks like an OpenAI key; an Anthropic admin key starts with sk-ant-admin.';
  return 'An Anthropic admin key starts with sk-ant-admin.';
}

/** The organization of a key that passed the check (organization.ts), mapped to the API's problems like the check. */
async function readOrganization(provider: Provider, adminKey: string): Promise<string[]> {
  try {
    return await organizationOf(provider, adminKey, { attempts: 1, timeoutMs: 10_000 });
  } catch (error) {
    if (error instanceof ProviderRefused) throw new ConnectionRefused(`${providerName(provider)} answered ${error.status}: ${error.providerMessage}`);
    if (error instanceof ProviderLimitExceeded) throw new ProviderAnswerRefused(provider, error);
    logger.warn('provider organization read failed', { provider, reason: error instanceof Error ? error.name : 'error' });
    throw new ProviderUnavailableError(provider);
  }
}

/** The ONE read call that checks a key with its provider, mapped to the API's problems. */
async function checkWithProvider(provider: Provider, adminKey: string): Promise<void> {
  const problem = adminKeyProblem(provider, adminKey);
  if (problem) throw new ValidationError('adminKey is not an admin key.', [{ path: 'adminKey', message: problem }]);
  try {
    // One call: no retries here (the person waits; a 5xx answers 502 at once).
    await providerClient(provider, adminKey, { attempts: 1, timeoutMs: 10_000 }).check();
  } catch (error) {
    if (error instanceof ProviderRefused) {
      const said = `${providerName(provider)} answered ${error.status}: ${error.providerMessage}`;
      throw new ConnectionRefused(
        provider === 'openrouter'
          ? `${said.replace(/\.$/, '')}. A connection needs an OpenRouter management key (openrouter.ai → Settings → Management keys); an inference key cannot list keys or read activity.`
          : said,
      );
    }
    if (error instanceof ProviderLimitExceeded) throw new ProviderAnswerRefused(provider, error);
    logger.warn('provider check failed', { provider, reason: error instanceof Error ? error.name : 'error' });
    throw new ProviderUnavailableError(provider);
  }
}

export function connectionView(c: Connection) {
  return {
    id: c.id,
    provider: c.provider,
    name: c.name,
    keyHint: c.keyHint,
    status: c.status,
    statusDetail: c.statusDetail,
    lastSyncAt: c.lastSyncAt,
    lastSuccessAt: c.lastSuccessAt,
    importedFrom: c.importedFrom,
    enforcement: c.enforcement ?? 'off',
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
  };
}

/**
 * The first day of the previous UTC month: where a new connection's import starts; for a provider that keeps less
 * (OpenRouter's activity: the last 30 completed UTC days), its oldest day.
 */
export function importStart(now: Date, provider?: Provider): string {
  const first = isoDate(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)));
  const oldest = provider ? firstReadableDay(provider, isoDate(now)) : undefined;
  return oldest !== undefined && oldest > first ? oldest : first;
}

const hintOf = (adminKey: string) => adminKey.slice(-4);

/** Ids kept of an organization's reading: one shared id proves it, so the first 200 (the item stays small). */

export async function createConnection(accountId: string, body: CreateConnectionBody, now = new Date()) {
  await checkWithProvider(body.provider, body.adminKey);
  const organization = await readOrganization(body.provider, body.adminKey);
  const id = newId('connection');
  const at = now.toISOString();
  const importedFrom = importStart(now, body.provider);
  const connection: Connection = {
    id,
    accountId,
    provider: body.provider,
    name: body.name ?? `${providerName(body.provider)} organization`,
    keyHint: hintOf(body.adminKey),
    status: 'active',
    statusDetail: null,
    lastSyncAt: null,
    lastSuccessAt: null,
    importedFrom,
    createdAt: at,
    updatedAt: at,
    secret: await sealSecret(body.adminKey, { accountId, connectionId: id }),
    cursor: importedFrom,
    // Due at once: the dispatcher's next run picks it up; and it is queued right now too.
    nextSyncAt: at,
    manualSyncAt: null,
    errorAlertDay: null,
    organization: storedOrganization(organization),
  };
  if (!(await putNewConnection(connection))) {
    throw new Conflict(`The account has a ${providerName(body.provider)} connection already (one per provider): rotate its admin key instead.`, 'connection-exists');
  }
  await queueSync({ accountId, connectionId: id, provider: connection.provider });
  return connectionView(connection);
}

export async function listConnections(accountId: string) {
  const items = await loadConnections(accountId);
  items.sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  return { items: items.map(connectionView), nextCursor: null };
}

async function mustGet(accountId: string, id: string, consistent = false): Promise<Connection> {
  if (!isId('connection', id)) throw new NotFound('No such connection in this account.');
  const c = await getConnection(accountId, id, consistent);
  if (!c) throw new NotFound('No such connection in this account.');
  return c;
}

export async function getConnectionView(accountId: string, id: string) {
  return connectionView(await mustGet(accountId, id));
}

export async function updateConnection(accountId: string, id: string, patch: PatchConnectionBody, now = new Date()) {
  const current = await mustGet(accountId, id, true);
  let organization: string[] | undefined;
  if (patch.adminKey !== undefined) {
    await checkWithProvider(current.provider, patch.adminKey);
    // A connection stays with its organization: its import snapshot is that organization's usage. Proven, never
    // assumed: by the organization's id, else by projects (OpenAI) or keys (OpenRouter) the two keys share.
    organization = await readOrganization(current.provider, patch.adminKey);
    // What the connection is known by: read when it was connected or last rotated, kept current by its syncs (only
    // the sync worker ever opens a stored admin key).
    const compared = compareOrganizations(current.provider, current.organization, organization);
    if (compared.result === 'other') {
      throw new ValidationError('adminKey belongs to another organization.', [
        {
          path: 'adminKey',
          message: `This admin key belongs to a different ${providerName(current.provider)} organization than the one this connection imports. A connection stays with its organization: use an admin key of the same organization, or delete this connection and connect the other organization.`,
        },
      ]);
    }
    if (compared.result === 'unproven') {
      const message = `${compared.reason}, so Burnrate can't prove that this admin key belongs to the same ${providerName(current.provider)} organization. A connection stays with its organization: delete this connection and connect again with the new key instead.`;
      throw new HttpError(400, 'organization-unproven', 'The new admin key can\'t be proven to belong to the same organization.', message, [{ path: 'adminKey', message }]);
    }
  }
  const secret = patch.adminKey !== undefined ? await sealSecret(patch.adminKey, { accountId, connectionId: id }) : undefined;
  // The provider's answers took a while (a sync may have written the connection meanwhile): the change is made on the
  // latest version, read again for each try (the provider's checks stand: the organization can't change).
  for (let attempt = 0; ; attempt++) {
    const latest = attempt === 0 && patch.adminKey === undefined ? current : await mustGet(accountId, id, true);
    const next = nextVersion(latest, patch, now, secret, organization);
    if (await replaceConnection(next.connection, latest.updatedAt)) {
      // A new admin key or enforcement turned on: the next sync acts (a failed act is retried with the new key).
      // Enforcement turned off or paused: the sync worker puts back every lever Burnrate holds there (it alone may open
      // the admin key); a refusal is an `enforcement_failed` alert saying how to undo it by hand.
      const letsGo = (patch.enforcement === 'off' && latest.enforcement === 'on') || (patch.status === 'paused' && latest.status !== 'paused');
      if (next.resumes || patch.adminKey !== undefined || (patch.enforcement === 'on' && latest.enforcement !== 'on') || (letsGo && (await heldOn(accountId, id)))) await queueSync({ accountId, connectionId: id, provider: latest.provider });
      return connectionView(next.connection);
    }
    if (attempt >= 2) throw new Conflict('The connection changed meanwhile; read it and try again.');
  }
}

/** The connection after a PATCH (pure): `secret` the sealed new admin key, `organization` what it was proven to be of. */
function nextVersion(current: Connection, patch: PatchConnectionBody, now: Date, secret: Connection['secret'] | undefined, organization: string[] | undefined): { connection: Connection; resumes: boolean } {
  const at = now.toISOString() > current.updatedAt ? now.toISOString() : new Date(Date.parse(current.updatedAt) + 1).toISOString();
  const next: Connection = { ...current, updatedAt: at };
  if (patch.name !== undefined) next.name = patch.name;
  if (patch.enforcement !== undefined) next.enforcement = patch.enforcement;
  if (patch.adminKey !== undefined && secret !== undefined) {
    next.secret = secret;
    next.keyHint = hintOf(patch.adminKey);
    // What the organization is known by now (OpenRouter's keys change): the new reading first, then what was known.
    if (organization) next.organization = storedOrganization([...organization, ...(current.organization ?? [])]);
  }
  const resumes = (patch.status === 'active' && current.status !== 'active') || (patch.adminKey !== undefined && current.status === 'error');
  if (patch.status === 'paused') {
    next.status = 'paused';
    next.nextSyncAt = null;
  } else if (resumes) {
    // Resumed, or a new key for a refused one: active again, due now.
    next.status = 'active';
    next.statusDetail = null;
    next.nextSyncAt = at;
  }
  return { connection: next, resumes };
}

export async function deleteConnection(accountId: string, id: string, now = new Date()): Promise<void> {
  const current = await mustGet(accountId, id, true);
  // Levers Burnrate holds on it are put back by the sync worker after the deletion, with the admin key kept sealed for
  // that alone (the release job; gone once done, or after 7 days).
  const held = await heldOn(accountId, id);
  if (held) await putReleaseJob(accountId, { connectionId: id, provider: current.provider, name: current.name, secret: current.secret, at: now.toISOString() });
  if (!(await removeConnection(current))) throw new NotFound('No such connection in this account.');
  if (held) await queueSync({ accountId, connectionId: id, provider: current.provider });
}

/** POST /connections/:id/sync: queued now, at most once a minute per connection (429 with Retry-After). */
export async function syncNow(accountId: string, id: string, now = new Date()) {
  const current = await mustGet(accountId, id, true);
  if (current.status === 'paused') throw new Conflict('The connection is paused: resume it first (PATCH status active).', 'connection-paused');
  const claimed = await claimManualSync(current, now);
  if (claimed !== true) {
    throw new TooManyRequests(`A sync of this connection was asked for less than a minute ago; try again in ${claimed} s.`, 'too-many-requests', claimed);
  }
  await queueSync({ accountId, connectionId: id, provider: current.provider });
  return { queuedAt: now.toISOString() };
}

/**
 * GET /connections/:id/reconciliation: per UTC day, what Burnrate shows for the connection's keys (`computedUsd`),
 * its token estimate, and what the provider bills (`billedUsd`, null: not billed yet), with the bill's lines. A
 * settled day's computed figure equals its bill, except Anthropic's Priority Tier, never billed in its cost report,
 * which stays an estimate on its own line.
 */
export async function reconciliation(accountId: string, id: string, query: ReconciliationQuery, now = new Date()) {
  const c = await mustGet(accountId, id);
  const { from, to } = breakdownRange(query, now);
  const span = (parseDate(to)!.getTime() - parseDate(from)!.getTime()) / 86_400_000 + 1;
  if (span > MAX_RECONCILIATION_DAYS) {
    throw new ValidationError(`The range may span at most ${MAX_RECONCILIATION_DAYS} days.`, [{ path: 'query.from', message: `The range spans ${span} days.` }]);
  }
  const byDay = new Map((await loadReconDetails(accountId, c.provider, from, to)).map((d) => [d.date, d]));
  let computed = 0n;
  let billed = 0n;
  let estimated = 0n;
  const days = daysBetween(from, to).map((date) => {
    const d = byDay.get(date);
    const billedMicros = d?.settled ? d.billedMicros : null;
    computed += d?.computedMicros ?? 0n;
    estimated += d?.estimatedMicros ?? 0n;
    billed += billedMicros ?? 0n;
    return {
      date,
      settled: d?.settled ?? false,
      computedUsd: microsToUsd(d?.computedMicros ?? 0n),
      estimatedUsd: microsToUsd(d?.estimatedMicros ?? 0n),
      billedUsd: billedMicros === null ? null : microsToUsd(billedMicros),
      lines: (d?.settled ? d.lines : []).map((l) => ({
        line: l.line,
        estimatedUsd: microsToUsd(l.estimatedMicros),
        billedUsd: l.billedMicros === null ? null : microsToUsd(l.billedMicros),
        reason: l.reason,
      })),
    };
  });
  return { from, to, days, total: { computedUsd: microsToUsd(computed), estimatedUsd: microsToUsd(estimated), billedUsd: microsToUsd(billed) } };
}
