/**
 * Roles, enforced for every `jwt` route in ONE place: `jwtAuth` (shared/http/auth-context.ts) reads the caller's
 * user from our table (not from a token claim) and checks it against the route table's `role`
 * (shared/routes.ts). A call beyond the role: 403 `/problems/forbidden`, before the handler runs (nothing changes).
 */
import type { Role } from '#shared/db/accounts.ts';
import { API_PREFIX, routes, type RouteRole } from '#shared/routes.ts';

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

/** True when `role` may do what `needed` may. */
export function allows(role: Role, needed: RouteRole): boolean {
  return RANK[role] >= RANK[needed];
}

/** `METHOD /path` (API Gateway's routeKey, with or without the `/api` prefix) → the route's least role. */
const byRouteKey = new Map<string, RouteRole>(routes.filter((r) => r.auth === 'jwt').map((r) => [`${r.method} ${r.path}`, r.role ?? 'admin']));

/**
 * The least role a route needs, by its routeKey. A routeKey that is not a `jwt` route of the table (it can't
 * happen behind API Gateway or the local gateway) needs `admin`: fail closed.
 */
export function roleForRoute(routeKey: string | undefined): RouteRole {
  const key = (routeKey ?? '').replace(` ${API_PREFIX}/`, ' /');
  return byRouteKey.get(key) ?? 'admin';
}
