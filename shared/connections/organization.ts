/**
 * Which organization an admin key belongs to, as the provider's own API says it, so a rotation can't move a
 * connection to another organization (its import snapshot belongs to the one it was created for). A rotation is
 * accepted only when the new key is PROVEN to be of the same organization; never by default:
 * - Anthropic: `GET /v1/organizations/me` → the organization's `id` (Get Current Organization): the same id.
 * - OpenAI: the Admin API names no organization id, but projects are never deleted (only archived) and their ids are
 *   unique: the organization is known by its projects, `GET /v1/organization/projects?include_archived=true`. Two keys
 *   are of the same organization when their project lists share an id.
 * - OpenRouter: no account id is named either (`GET /api/v1/key` describes the key only), but every API key's `hash`
 *   is the SHA-256 of its secret, unique across OpenRouter: the account is known by its keys, `GET /api/v1/keys`
 *   (`include_disabled=true`). Two management keys are of the same account when their key lists share a key.
 * An OpenAI organization without projects or an OpenRouter account without keys can't be proven: an empty list would
 * compare equal to any other. Such a rotation is refused, saying why (delete the connection and connect again).
 * What a connection is known by is read when it is connected or rotated, and kept current by its syncs (the key
 * inventory: OpenAI projects, OpenRouter keys), at most 200 ids; only the sync worker ever opens the stored admin key.
 * Every list is read within the bounds of pages.ts.
 */
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import { ANTHROPIC_VERSION } from '#shared/connections/anthropic.ts';
import { ProviderBadResponse, providerHttp, type ProviderHttpOptions } from '#shared/connections/http.ts';
import type { Provider } from '#shared/connections/model.ts';
import { openAiClient } from '#shared/connections/openai.ts';
import { openRouterClient } from '#shared/connections/openrouter.ts';

/** The ids that name a key's organization: Anthropic's organization id; an OpenAI organization's projects; an OpenRouter account's keys. */
export async function organizationOf(provider: Provider, adminKey: string, options: ProviderHttpOptions = {}): Promise<string[]> {
  const base = providerBaseUrl(provider);
  if (provider === 'anthropic') {
    const http = providerHttp(base, { 'x-api-key': adminKey, 'anthropic-version': ANTHROPIC_VERSION }, adminKey, options);
    const me = (await http.getJson(new URL(`${base}/v1/organizations/me`))) as { id?: unknown };
    if (typeof me.id !== 'string' || !me.id) throw new ProviderBadResponse('The provider answered /v1/organizations/me without an organization id.');
    return [me.id];
  }
  if (provider === 'openai') return (await openAiClient(base, adminKey, options).listProjects()).map((p) => p.id);
  return (await openRouterClient(base, adminKey, options).listKeys()).map((k) => k.id);
}

/** Ids kept of an organization's reading: one shared id proves it, so the first 200 (the connection item stays small). */
export const MAX_STORED_ORGANIZATION_IDS = 200;
export const storedOrganization = (ids: readonly string[]): string[] => [...new Set(ids)].slice(0, MAX_STORED_ORGANIZATION_IDS);

/**
 * What a sync's key inventory adds to what a connection's organization is known by (OpenAI: the projects of its keys;
 * OpenRouter: its keys, which come and go), newest first; undefined when nothing changes (Anthropic's id is fixed).
 */
export function organizationAfterSync(provider: Provider, known: readonly string[] | null | undefined, inventory: readonly { id: string; project: { id: string } | null }[]): string[] | undefined {
  if (provider === 'anthropic') return undefined;
  const fresh = provider === 'openai' ? inventory.flatMap((k) => (k.project ? [k.project.id] : [])) : inventory.map((k) => k.id);
  if (fresh.length === 0) return undefined;
  const next = storedOrganization([...fresh, ...(known ?? [])]);
  const before = new Set(known ?? []);
  return next.length === before.size && next.every((id) => before.has(id)) ? undefined : next;
}

/** What the organization is known by, in words (the 400's). */
const KNOWN_BY: Record<Provider, string> = {
  anthropic: 'its organization id',
  openai: 'its projects (OpenAI names no organization id; projects are never deleted)',
  openrouter: 'its API keys (OpenRouter names no account id)',
};
const NOTHING: Record<Provider, string> = {
  anthropic: 'no organization id',
  openai: 'no projects',
  openrouter: 'no API keys',
};

/**
 * Whether a rotation stays in the organization: `same` when the readings share an id; `other` when both name
 * something and share nothing; `unproven` (with the reason) when either side names nothing.
 */
export function compareOrganizations(
  provider: Provider,
  known: readonly string[] | null | undefined,
  fresh: readonly string[],
): { result: 'same' } | { result: 'other' } | { result: 'unproven'; reason: string } {
  if (!known || known.length === 0) {
    return { result: 'unproven', reason: `Burnrate knows this connection's organization by ${KNOWN_BY[provider]}, and it had ${NOTHING[provider]} when it was read` };
  }
  if (fresh.length === 0) {
    return { result: 'unproven', reason: `Burnrate knows an organization by ${KNOWN_BY[provider]}, and the new key's organization has ${NOTHING[provider]}` };
  }
  const ids = new Set(known);
  return fresh.some((id) => ids.has(id)) ? { result: 'same' } : { result: 'other' };
}
