import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { API_PREFIX, jwtRouteRoles, routes, type AuthKind } from '#shared/routes.ts';
import { roleForRoute } from '#shared/access/roles.ts';
import ROUTE_ROLES from '#shared/access/route-roles.json' with { type: 'json' };

/** The route table says how a route is authenticated; the handler must use exactly that authenticator. */
const AUTHENTICATOR: Record<AuthKind, RegExp> = {
  jwt: /auth: jwtAuth\b/,
  ingestKey: /auth: ingestKeyAuth\b/,
  stripe: /auth: stripeWebhookAuth\b/,
  none: /auth: 'none'/,
};

describe('route table', () => {
  it('the roles the functions check (shared/access/route-roles.json) are the table\'s: `npm run gen:api` writes them', () => {
    expect(ROUTE_ROLES, 'shared/access/route-roles.json is stale: run `npm run gen:api`').toEqual(jwtRouteRoles());
    for (const r of routes.filter((x) => x.auth === 'jwt')) {
      expect(roleForRoute(`${r.method} ${API_PREFIX}${r.path}`), `${r.method} ${r.path}`).toBe(r.role ?? 'admin');
      expect(roleForRoute(`${r.method} ${r.path}`), `${r.method} ${r.path}`).toBe(r.role ?? 'admin');
    }
    // Not a jwt route of the table: admin (fail closed).
    expect(roleForRoute('GET /health')).toBe('admin');
    expect(roleForRoute(undefined)).toBe('admin');
    expect(roleForRoute('GET /no/such/route')).toBe('admin');
  });

  it('has one route per method and path', () => {
    const seen = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: the handler uses the auth kind of its route', (_name, route) => {
    const source = readFileSync(new URL(`../../functions/${route.handler}.ts`, import.meta.url), 'utf8');
    expect(source).toMatch(AUTHENTICATOR[route.auth]);
  });
});
