import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { routes, type AuthKind } from '#shared/routes.ts';

/** The route table says how a route is authenticated; the handler must use exactly that authenticator. */
const AUTHENTICATOR: Record<AuthKind, RegExp> = {
  jwt: /auth: jwtAuth\b/,
  ingestKey: /auth: ingestKeyAuth\b/,
  stripe: /auth: stripeWebhookAuth\b/,
  none: /auth: 'none'/,
};

describe('route table', () => {
  it('has one route per method and path', () => {
    const seen = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: the handler uses the auth kind of its route', (_name, route) => {
    const source = readFileSync(new URL(`../../functions/${route.handler}.ts`, import.meta.url), 'utf8');
    expect(source).toMatch(AUTHENTICATOR[route.auth]);
  });
});
