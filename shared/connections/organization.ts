/**
 * Which organization an admin key belongs to, as the provider's own API says it, so a rotation can't move a
 * connection to another organization (its import snapshot belongs to the one it was created for):
 * - Anthropic: `GET /v1/organizations/me` → the organization's `id` (Get Current Organization).
 * - OpenAI: the Admin API names no organization id, but projects are never deleted (only archived) and their ids are
 *   unique: the organization is known by its projects, `GET /v1/organization/projects?include_archived=true`. Two keys
 *   are of the same organization when their project lists share an id.
 * - OpenRouter: no account id is named either (`GET /api/v1/key` describes the key only), but every API key's `hash`
 *   is the SHA-256 of its secret, unique across OpenRouter: the account is known by its keys, `GET /api/v1/keys`
 *   (`include_disabled=true`). Two management keys are of the same account when their key lists share a key.
 * - Other providers: not known (null): a rotation is not compared.
 */
import { providerBaseUrl } from '#shared/connections/endpoints.ts';
import { ANTHROPIC_VERSION } from '#shared/connections/anthropic.ts';
import { ProviderBadResponse, providerHttp, type ProviderHttpOptions } from '#shared/connections/http.ts';
import type { Provider } from '#shared/connections/model.ts';
import { openRouterClient } from '#shared/connections/openrouter.ts';

/** The ids that name a key's organization (one for Anthropic; its projects' for OpenAI), or null when not known. */
export async function organizationOf(provider: Provider, adminKey: string, options: ProviderHttpOptions = {}): Promise<string[] | null> {
  const base = providerBaseUrl(provider);
  if (provider === 'anthropic') {
    const http = providerHttp(base, { 'x-api-key': adminKey, 'anthropic-version': ANTHROPIC_VERSION }, adminKey, options);
    const me = (await http.getJson(new URL(`${base}/v1/organizations/me`))) as { id?: unknown };
    if (typeof me.id !== 'string' || !me.id) throw new ProviderBadResponse('The provider answered /v1/organizations/me without an organization id.');
    return [me.id];
  }
  if (provider === 'openai') {
    const http = providerHttp(base, { authorization: `Bearer ${adminKey}` }, adminKey, options);
    const ids: string[] = [];
    let after: string | undefined;
    for (;;) {
      const url = new URL(`${base}/v1/organization/projects`);
      url.searchParams.set('include_archived', 'true');
      url.searchParams.set('limit', '100');
      if (after) url.searchParams.set('after', after);
      const body = (await http.getJson(url)) as { data?: { id?: unknown }[]; has_more?: unknown; last_id?: unknown };
      const page = (body.data ?? []).flatMap((p) => (typeof p.id === 'string' ? [p.id] : []));
      ids.push(...page);
      if (body.has_more !== true || page.length === 0) return ids;
      after = typeof body.last_id === 'string' ? body.last_id : page.at(-1);
    }
  }
  if (provider === 'openrouter') return (await openRouterClient(base, adminKey, options).listKeys()).map((k) => k.id);
  return null;
}

/** Whether two organization readings name the same organization (unknown on either side: not comparable, true). */
export function sameOrganization(known: readonly string[] | null | undefined, fresh: readonly string[] | null): boolean {
  if (!known || known.length === 0 || !fresh) return true;
  const ids = new Set(known);
  return fresh.some((id) => ids.has(id));
}
