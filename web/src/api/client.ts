/**
 * The ONE API client of the dashboard: openapi-fetch over the types generated from our OpenAPI document
 * (schema.d.ts, `npm run gen:api`). It adds the ID token, and on a 401 of a signed-in call ends the session and
 * sends the user to sign-in, with the page they were on to come back to.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';
import { endSession, ensureToken } from './session.ts';
import { navigate } from '../router.tsx';

export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];

const PUBLIC = /^\/api\/(auth\/(login|register|refresh|accept-invitation|verify-email|forgot-password|reset-password)|health|openapi\.json)$/;

const auth: Middleware = {
  async onRequest({ request }) {
    const path = new URL(request.url).pathname;
    if (PUBLIC.test(path)) return request;
    const token = await ensureToken();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has('authorization')) {
      endSession();
      const back = location.pathname + location.search;
      navigate(`/sign-in?next=${encodeURIComponent(back)}`, { replace: true });
    }
    return response;
  },
};

// Paths are relative to the document's server `/api`.
export const api = createClient<paths>({ baseUrl: `${location.origin}/api` });
api.use(auth);

/** An error the user should read: the problem's `detail` (else its title), with field errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem>,
  ) {
    super(problem.detail ?? problem.title ?? `The request failed (${status}).`);
  }
  field(path: string): string | undefined {
    return this.problem.errors?.find((e) => e.path === path)?.message;
  }
}

/** `await ok(api.GET(...))` → the data, or throws an ApiError carrying the problem+json. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = (error && typeof error === 'object' ? error : {}) as Partial<Problem> & { message?: unknown };
  const problem: Partial<Problem> = { ...body, title: body.title ?? response.statusText };
  // API Gateway's own answers are `{"message": "..."}`.
  if (!problem.detail && typeof body.message === 'string') problem.detail = body.message;
  throw new ApiError(response.status, problem);
}
