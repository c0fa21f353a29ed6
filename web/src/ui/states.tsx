import type { ComponentChildren } from 'preact';
import type { Loaded } from './load.ts';

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** A problem's `detail` (or title) as the user sees it. */
export function ErrorBox({ error }: { error: Error | string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** Loading, then the error, else `children(data)`. Stale data stays visible while a reload runs. */
export function Show<T>({ state, children }: { state: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (state.error) return <ErrorBox error={state.error} />;
  if (state.data === undefined) return <Loading />;
  return <>{children(state.data)}</>;
}

export function Screen({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="screen" aria-labelledby="screen-title">
      <div class="screen-head">
        <h1 id="screen-title" tabIndex={-1}>
          {title}
        </h1>
        {actions}
      </div>
      {children}
    </section>
  );
}
