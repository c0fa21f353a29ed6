/**
 * The signed-in session. The ID token lives in memory only; the refresh token in sessionStorage (this tab, gone
 * when it closes) so a reload or an e-mailed link opened in the tab keeps the user signed in. The ID token is
 * refreshed a minute before it expires; sign-out forgets both.
 *
 * Tabs of one browser share the session over a BroadcastChannel (same origin only, nothing written to disk): a new
 * tab without a session asks the open tabs for theirs before its first screen (`joinSession`), and signing out in one
 * tab signs out every tab (`signOut`). Nothing long-lived is kept in localStorage or a script-readable cookie: once
 * the browser's last tab of Burnrate closes, the session is gone (README "Sessions across tabs").
 */
const REFRESH_KEY = 'burnrate.refreshToken';
const EARLY_MS = 60_000;
/** How long a new tab waits for an open tab to answer before it shows sign-in. */
const JOIN_WAIT_MS = 250;

type Message = { type: 'ask' } | { type: 'share'; refreshToken: string; token?: string; expiresAt?: number } | { type: 'signout' };
const channel: BroadcastChannel | undefined = typeof BroadcastChannel === 'function' ? new BroadcastChannel('burnrate.session') : undefined;

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

/** Sign out here and in every other tab of this browser. */
export function signOut(): void {
  endSession();
  channel?.postMessage({ type: 'signout' } satisfies Message);
}

channel?.addEventListener('message', (event: MessageEvent<Message>) => {
  const message = event.data;
  if (message.type === 'signout') endSession();
  else if (message.type === 'ask') {
    const refreshToken = storage()?.getItem(REFRESH_KEY);
    if (refreshToken) channel.postMessage({ type: 'share', refreshToken, ...(tokens ? { token: tokens.token, expiresAt: tokens.expiresAt } : {}) } satisfies Message);
  } else if (message.type === 'share' && !storage()?.getItem(REFRESH_KEY)) adopt(message);
});

function adopt(message: Extract<Message, { type: 'share' }>): void {
  storage()?.setItem(REFRESH_KEY, message.refreshToken);
  if (message.token && message.expiresAt) setToken(message.token, (message.expiresAt - Date.now()) / 1000);
  changed();
}

/** A tab opened without a session (a new tab, a pasted link) takes the session of an open tab, if one answers in time. */
export function joinSession(): Promise<void> {
  if (!channel || hasSession()) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timeout);
      channel.removeEventListener('message', answered);
      resolve();
    };
    const answered = (event: MessageEvent<Message>) => event.data.type === 'share' && done();
    const timeout = setTimeout(done, JOIN_WAIT_MS);
    channel.addEventListener('message', answered);
    channel.postMessage({ type: 'ask' } satisfies Message);
  });
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
