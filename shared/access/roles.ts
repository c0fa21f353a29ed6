/**
 * Roles, enforced for every `jwt` route in ONE place: `jwtAuth` (shared/http/auth-context.ts) reads the caller's
 * user from our table (not from a token claim) and checks it against the route table's `role`
 * (shared/routes.ts, as shared/access/route-roles.json). A call beyond the role: 403 `/problems/forbidden`, before the handler runs (nothing changes).
 */
import type { Role } from '#shared/db/accounts.ts';
import { API_PREFIX, type RouteRole } from '#shared/routes.ts';
// Generated from the route table by `npm run gen:api` (shared/routes.ts `jwtRouteRoles`): the table itself stays out of the functions.
import ROUTE_ROLES from '#shared/access/route-roles.json' with { type: 'json' };

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

/** True when `role` may do what `needed` may. */
export function allows(role: Role, needed: RouteRole): boolean {
  return RANK[role] >= RANK[needed];
}

/** `METHOD /path` (API Gateway's routeKey, with or without the `/api` prefix) → the route's least role. */
const byRouteKey = new Map<string, RouteRole>(Object.entries(ROUTE_ROLES as Record<string, RouteRole>));

/**
 * The least role a route needs, by its routeKey. A routeKey that is not a `jwt` route of the table (it can't
 * happen behind API Gateway or the local gateway) needs `admin`: fail closed.
 */
export function roleForRoute(routeKey: string | undefined): RouteRole {
  const key = (routeKey ?? '').replace(` ${API_PREFIX}/`, ' /');
  return byRouteKey.get(key) ?? 'admin';
}
