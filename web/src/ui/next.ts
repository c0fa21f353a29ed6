/** Where sign-in returns to: only a path of this site (`/keys?x=1`), never another origin (`//evil`, `https://…`). */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  try {
    // Whatever the browser would make of it must stay on this origin.
    const url = new URL(next, 'http://burnrate.invalid');
    return url.origin === 'http://burnrate.invalid' ? url.pathname + url.search + url.hash : '/';
  } catch {
    return '/';
  }
}
