/**
 * Helpers for tests against the stack's stand-ins of the providers' admin APIs (local/openai-admin.ts,
 * local/anthropic-admin.ts). Each test file makes its own organization (`newStandInOrg`): its own admin key, clock,
 * faults and request counts, so files running side by side never disturb each other.
 */
import { stack } from './harness.ts';

export type Provider = 'openai' | 'anthropic';

export interface StandInOrg {
  provider: Provider;
  /** The stand-in's base URL (no /v1): what `OPENAI_ADMIN_URL` / `ANTHROPIC_ADMIN_URL` hold in the stack. */
  url: string;
  id: string;
  adminKey: string;
  /** First day of its seeded usage (YYYY-MM-DD): the first day of the previous UTC month. */
  importFrom: string;
  /** One call of its control API (`/_burnrate/orgs/<id>/<path>`). */
  control<T = any>(path: string, body?: unknown, method?: string): Promise<T>;
  /** A GET of the provider API with this organization's admin key (or `key`) and the required headers. */
  get(path: string, options?: { key?: string | null; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  state(): Promise<any>;
  remove(): Promise<void>;
}

export function standInUrl(provider: Provider): string {
  return provider === 'openai' ? stack().openaiAdmin.url : stack().anthropicAdmin.url;
}

/** The headers a real client sends with `key` (none when null). */
export function authHeaders(provider: Provider, key: string | null): Record<string, string> {
  if (key === null) return provider === 'anthropic' ? { 'anthropic-version': '2023-06-01' } : {};
  return provider === 'openai' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
}

/**
 * A new organization on the stack's stand-in: the seeded one (or `big`), its own admin key; `now` freezes its clock
 * (ISO or unix seconds), `late: null` turns late arrivals off.
 */
export async function newStandInOrg(
  provider: Provider,
  options: { big?: { keys: number; models: number; days: number; requests?: number }; now?: string | number; late?: { share: number; hours: number } | null } = {},
): Promise<StandInOrg> {
  const url = standInUrl(provider);
  const res = await fetch(`${url}/_burnrate/orgs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(options) });
  if (res.status !== 201) throw new Error(`POST /_burnrate/orgs: ${res.status} ${await res.text()}`);
  const state = (await res.json()) as { id: string; adminKey: string; importFrom: string };
  const org: StandInOrg = {
    provider,
    url,
    id: state.id,
    adminKey: state.adminKey,
    importFrom: state.importFrom,
    async control(path, body, method) {
      const r = await fetch(`${url}/_burnrate/orgs/${state.id}${path}`, {
        method: method ?? (body === undefined ? 'GET' : 'POST'),
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as never;
    },
    async get(path, opts = {}) {
      const key = opts.key === undefined ? org.adminKey : opts.key;
      const r = await fetch(`${url}${path}`, { headers: { ...authHeaders(provider, key), ...opts.headers } });
      const text = await r.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text
      }
      return { status: r.status, headers: r.headers, body };
    },
    state: () => org.control('/state'),
    async remove() {
      await fetch(`${url}/_burnrate/orgs/${state.id}`, { method: 'DELETE' });
    },
  };
  return org;
}
