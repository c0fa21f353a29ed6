/** A tiny history router: `useRoute()` re-renders on navigation; `navigate()` pushes; `<Link>` intercepts clicks. */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const EVENT = 'burnrate:navigate';

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  history[options.replace ? 'replaceState' : 'pushState'](null, '', to);
  window.dispatchEvent(new Event(EVENT));
  window.scrollTo(0, 0);
}

export interface Route {
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () =>
      setRoute((was) => (was.path === location.pathname && `?${was.query}` === (location.search || '?') ? was : current()));
    window.addEventListener('popstate', update);
    window.addEventListener(EVENT, update);
    // A navigation between the render and this subscription (a redirect of a child) is not missed.
    update();
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(EVENT, update);
    };
  }, []);
  return route;
}

/** `/keys/:hash` against `/keys/abc` → `{hash: "abc"}`; no match → undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.replace(/\/+$/, '').split('/');
  if (path === '/') got.splice(1, 1, '');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(':')) {
      if (!g) return undefined;
      params[w.slice(1)] = decodeURIComponent(g);
    } else if (w !== g) return undefined;
  }
  return params;
}

type LinkProps = JSX.IntrinsicElements['a'] & { href: string; children?: ComponentChildren };

export function Link({ href, onClick, ...rest }: LinkProps) {
  return (
    <a
      href={href}
      onClick={(event) => {
        onClick?.(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        navigate(href);
      }}
      {...rest}
    />
  );
}
