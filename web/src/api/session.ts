/**
 * The signed-in session. The ID token lives in memory only; the refresh token in sessionStorage (this tab, gone
 * when it closes) so a reload or an e-mailed link opened in the tab keeps the user signed in. The ID token is
 * refreshed a minute before it expires; sign-out forgets both.
 */
const REFRESH_KEY = 'burnrate.refreshToken';
const EARLY_MS = 60_000;

interface Tokens {
  token: string;
  expiresAt: number;
}

let tokens: Tokens | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | undefined;
const listeners = new Set<() => void>();

function storage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function changed(): void {
  for (const listener of listeners) listener();
}

export function idToken(): string | undefined {
  return tokens?.token;
}

export function hasSession(): boolean {
  return tokens !== undefined || Boolean(storage()?.getItem(REFRESH_KEY));
}

/** After register, login or accept-invitation. */
export function startSession(session: { token: string; refreshToken: string; expiresIn: number }): void {
  storage()?.setItem(REFRESH_KEY, session.refreshToken);
  setToken(session.token, session.expiresIn);
  changed();
}

function setToken(token: string, expiresIn: number): void {
  tokens = { token, expiresAt: Date.now() + expiresIn * 1000 };
  clearTimeout(timer);
  timer = setTimeout(() => void refresh(), Math.max(0, expiresIn * 1000 - EARLY_MS));
}

export function endSession(): void {
  const had = hasSession();
  tokens = undefined;
  clearTimeout(timer);
  storage()?.removeItem(REFRESH_KEY);
  if (had) changed();
}

/** A valid ID token: the one in memory, or a fresh one from the refresh token (once, however many callers). */
export async function ensureToken(): Promise<string | undefined> {
  if (tokens && tokens.expiresAt - Date.now() > EARLY_MS / 2) return tokens.token;
  if (!storage()?.getItem(REFRESH_KEY)) return tokens?.token;
  await refresh();
  return tokens?.token;
}

function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const refreshToken = storage()?.getItem(REFRESH_KEY);
    if (!refreshToken) return false;
    try {
      const res = await fetch('/api/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refreshToken }),
      });
      if (!res.ok) {
        if (res.status === 400 || res.status === 401) endSession();
        return false;
      }
      const body = (await res.json()) as { token: string; expiresIn: number };
      setToken(body.token, body.expiresIn);
      return true;
    } catch {
      return false;
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}
