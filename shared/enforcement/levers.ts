/**
 * The levers: what a provider's admin API lets Burnrate do to stop spend, behind ONE interface. A provider offers a
 * key switch (Anthropic: a key `inactive` and back), a project's hard spend limit (OpenAI: enforced by OpenAI
 * itself), or both; the methods it lacks are absent and its offer (offers.ts, which the code that never pulls a
 * lever reads without bundling this module) says so. Another provider plugs in with its offer and its lever in the
 * connector worker of that provider (shared/sync/levers.ts): a worker bundles its own provider's lever only.
 */
import { ANTHROPIC_VERSION } from '#shared/connections/endpoints.ts';
import { ProviderBadResponse, ProviderRefused, providerHttp, type ProviderHttpOptions } from '#shared/connections/http.ts';

/** What a lever's calls may be given (tests: `fetch`, shorter waits). */
export type LeverHttpOptions = Pick<ProviderHttpOptions, 'attempts' | 'backoffMs' | 'timeoutMs' | 'maxRetryAfterMs' | 'fetch'>;

/**
 * The levers' calls: the reads' client (shared/connections/http.ts: the provider's own origin only, the admin key
 * redacted from anything thrown, 401/403 `ProviderRefused`, 429 and 5xx retried, then `ProviderUnavailable`), with
 * less patience: an act that fails is retried by the next sync.
 */
function leverHttp(base: string, headers: Record<string, string>, secret: string, options: LeverHttpOptions) {
  const http = providerHttp(base, headers, secret, { attempts: 3, backoffMs: 300, timeoutMs: 15_000, maxRetryAfterMs: 5_000, ...options });
  return {
    send: (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, opts?: { missingOk?: boolean }) => http.send(method, new URL(`${base}${path}`), body, opts),
  };
}

/** A project's hard spend limit as the provider reports it. */
export interface ProjectLimit {
  thresholdCents: number;
  /** The provider is refusing the project's requests (OpenAI `enforcement.status: "enforcing"`). */
  enforcing: boolean;
}

export interface Lever {
  readonly provider: string;
  /** Whether one key is on now (read before the first hold: a key a person turned off stays off). */
  readKey?(keyId: string): Promise<{ active: boolean }>;
  /** Stops one key (reversible): Anthropic `status: inactive`. */
  stopKey?(keyId: string): Promise<void>;
  startKey?(keyId: string): Promise<void>;
  /** The project's current hard limit, or null when it has none. */
  readProjectLimit?(projectId: string): Promise<ProjectLimit | null>;
  setProjectLimit?(projectId: string, thresholdCents: number): Promise<ProjectLimit>;
  removeProjectLimit?(projectId: string): Promise<void>;
  /** A key's own spend limit (OpenRouter: `limit` in dollars, with `limit_reset`): read, and set (null: none). */
  readKeyLimit?(keyId: string): Promise<{ limitCents: number | null; limitReset: string | null }>;
  setKeyLimit?(keyId: string, limitCents: number | null, limitReset: string | null): Promise<void>;
  /** A workspace's monthly spend limit (Anthropic Spend Limits API, beta): set (an upsert) → its id; deleted by id. */
  setWorkspaceLimit?(workspaceId: string, cents: number): Promise<{ id: string }>;
  deleteSpendLimit?(id: string): Promise<void>;
}

/** The provider will not set this cap for the organization (Anthropic's early access preview): no retry, keys still stop. */
export class CapUnavailable extends Error {
  override name = 'CapUnavailable';
}

/** A provider's lever, made for one admin key at the provider's origin (a connector worker is given its own provider's: shared/sync/levers.ts). */
export type LeverFactory = (base: string, adminKey: string, options: LeverHttpOptions) => Lever;

/** Anthropic: `POST /v1/organizations/api_keys/{id}` `{status}` (https://platform.claude.com/docs/en/api/admin/api_keys/update). */
export function anthropicLever(base: string, adminKey: string, options: LeverHttpOptions = {}): Lever {
  const http = leverHttp(base, { 'x-api-key': adminKey, 'anthropic-version': ANTHROPIC_VERSION }, adminKey, options);
  const setStatus = async (keyId: string, status: 'active' | 'inactive') => {
    const body = (await http.send('POST', `/v1/organizations/api_keys/${encodeURIComponent(keyId)}`, { status })) as { status?: unknown };
    if (body.status !== status) throw new ProviderBadResponse(`Anthropic answered the key update without status ${status}.`);
  };
  const readKey = async (keyId: string) => {
    const body = (await http.send('GET', `/v1/organizations/api_keys/${encodeURIComponent(keyId)}`)) as { status?: unknown };
    if (typeof body.status !== 'string') throw new ProviderBadResponse('Anthropic answered the key without a status.');
    return { active: body.status === 'active' };
  };
  // Spend Limits API (platform.claude.com/docs/en/api/admin/spend_limits/create): an upsert on (scope, period); for
  // Console organizations workspace limits are monthly and "in an early access preview": an organization without it
  // is refused (CapUnavailable).
  const setWorkspaceLimit = async (workspaceId: string, cents: number) => {
    try {
      const body = (await http.send('POST', '/v1/organizations/spend_limits', { scope: { type: 'workspace', workspace_id: workspaceId }, period: 'monthly', amount: String(cents) })) as { id?: unknown; amount?: unknown };
      if (typeof body.id !== 'string' || body.amount !== String(cents)) throw new ProviderBadResponse('Anthropic answered the spend limit without its id and amount.');
      return { id: body.id };
    } catch (error) {
      // No early access: a 403 saying so, or the 400 the reference gives for a scope the organization may not set.
      if (error instanceof ProviderRefused && error.status === 403 && /early access|preview|not (enabled|available)/i.test(error.providerMessage)) throw new CapUnavailable(error.providerMessage);
      if (error instanceof ProviderBadResponse && / 400: /.test(error.message)) throw new CapUnavailable(error.message.replace(/^.* 400: /, ''));
      throw error;
    }
  };
  const deleteSpendLimit = async (id: string) => {
    await http.send('DELETE', `/v1/organizations/spend_limits/${encodeURIComponent(id)}`, undefined, { missingOk: true });
  };
  return { provider: 'anthropic', readKey, stopKey: (id) => setStatus(id, 'inactive'), startKey: (id) => setStatus(id, 'active'), setWorkspaceLimit, deleteSpendLimit };
}

/** OpenAI: `GET|POST|DELETE /v1/organization/projects/{id}/spend_limit` (https://developers.openai.com/api/docs/guides/spend-limits). */
export function openAiLever(base: string, adminKey: string, options: LeverHttpOptions = {}): Lever {
  const http = leverHttp(base, { authorization: `Bearer ${adminKey}` }, adminKey, options);
  const path = (projectId: string) => `/v1/organization/projects/${encodeURIComponent(projectId)}/spend_limit`;
  const read = (body: unknown): ProjectLimit => {
    const b = body as { threshold_amount?: unknown; enforcement?: { status?: unknown } };
    if (typeof b.threshold_amount !== 'number') throw new ProviderBadResponse('OpenAI answered a spend limit without threshold_amount.');
    return { thresholdCents: b.threshold_amount, enforcing: b.enforcement?.status === 'enforcing' };
  };
  return {
    provider: 'openai',
    async readProjectLimit(projectId) {
      const body = await http.send('GET', path(projectId), undefined, { missingOk: true });
      return body === undefined ? null : read(body);
    },
    async setProjectLimit(projectId, thresholdCents) {
      return read(await http.send('POST', path(projectId), { threshold_amount: thresholdCents, currency: 'USD', interval: 'month' }));
    },
    async removeProjectLimit(projectId) {
      await http.send('DELETE', path(projectId), undefined, { missingOk: true });
    },
  };
}

/** OpenRouter: `PATCH /api/v1/keys/{hash}` `{disabled}` (https://openrouter.ai/docs/api/api-reference/api-keys; its client confirms the answer). */
export function openRouterLever(base: string, managementKey: string, options: LeverHttpOptions = {}): Lever {
  const root = base.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  const http = leverHttp(root, { authorization: `Bearer ${managementKey}` }, managementKey, options);
  const setDisabled = async (hash: string, disabled: boolean) => {
    const body = (await http.send('PATCH', `/api/v1/keys/${encodeURIComponent(hash)}`, { disabled })) as { data?: { disabled?: unknown } };
    if (body?.data?.disabled !== disabled) throw new ProviderBadResponse(`OpenRouter did not confirm the key as ${disabled ? 'disabled' : 'enabled'}.`);
  };
  const readKey = async (hash: string) => {
    const body = (await http.send('GET', `/api/v1/keys/${encodeURIComponent(hash)}`)) as { data?: { disabled?: unknown } };
    if (typeof body?.data?.disabled !== 'boolean') throw new ProviderBadResponse('OpenRouter answered the key without disabled.');
    return { active: body.data.disabled === false };
  };
  // The key's own limit (openrouter.ai/docs/api/api-reference/api-keys/update-keys): dollars, `limit_reset`
  // daily|weekly|monthly|null (resets at midnight UTC); OpenRouter refuses the key past it by itself.
  const readKeyLimit = async (hash: string) => {
    const body = (await http.send('GET', `/api/v1/keys/${encodeURIComponent(hash)}`)) as { data?: { limit?: unknown; limit_reset?: unknown } };
    const limit = body?.data?.limit;
    if (limit !== null && typeof limit !== 'number') throw new ProviderBadResponse('OpenRouter answered the key without limit.');
    return { limitCents: limit === null ? null : Math.round(limit * 100), limitReset: typeof body.data!.limit_reset === 'string' ? body.data!.limit_reset : null };
  };
  const setKeyLimit = async (hash: string, limitCents: number | null, limitReset: string | null) => {
    const limit = limitCents === null ? null : limitCents / 100;
    const body = (await http.send('PATCH', `/api/v1/keys/${encodeURIComponent(hash)}`, { limit, limit_reset: limitReset })) as { data?: { limit?: unknown } };
    if (body?.data?.limit !== limit) throw new ProviderBadResponse('OpenRouter did not confirm the key\'s limit.');
  };
  return { provider: 'openrouter', readKey, stopKey: (hash) => setDisabled(hash, true), startKey: (hash) => setDisabled(hash, false), readKeyLimit, setKeyLimit };
}
