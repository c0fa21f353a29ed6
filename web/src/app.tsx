/** The shell: routes, the signed-in layout (navigation, who, sign-out) and the session gate. */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from './api/client.ts';
import { hasSession, onSessionChange, signOut } from './api/session.ts';
import { Link, match, navigate, useRoute } from './router.tsx';
import { useLoad } from './ui/load.ts';
import { MeContext } from './ui/me.tsx';
import { ErrorBox, Loading } from './ui/states.tsx';
import { SignIn } from './screens/sign-in/index.tsx';
import { SignUp } from './screens/sign-up/index.tsx';
import { Overview } from './screens/overview/index.tsx';
import { Keys } from './screens/keys/index.tsx';
import { KeyDetail } from './screens/key/index.tsx';
import { Projects } from './screens/projects/index.tsx';
import { WhoSpentIt } from './screens/chargeback/index.tsx';
import { Budgets } from './screens/budgets/index.tsx';
import { AlertRules } from './screens/alert-rules/index.tsx';
import { Alerts } from './screens/alerts/index.tsx';
import { Actions } from './screens/actions/index.tsx';
import { SendingKeys } from './screens/ingest-keys/index.tsx';
import { GetStarted } from './screens/get-started/index.tsx';
import { Prices } from './screens/prices/index.tsx';
import { Connections } from './screens/connections/index.tsx';
import { ConnectionReconciliation } from './screens/connections/reconciliation.tsx';
import { Team } from './screens/team/index.tsx';
import { Billing } from './screens/billing/index.tsx';
import { Settings } from './screens/settings/index.tsx';
import { AcceptInvitation } from './screens/accept-invitation/index.tsx';
import { NotFound } from './screens/not-found/index.tsx';
import { VerifyEmail } from './screens/verify-email/index.tsx';
import { ForgotPassword } from './screens/forgot-password/index.tsx';
import { ResetPassword } from './screens/reset-password/index.tsx';

type Params = Record<string, string>;
type Screen = ComponentType<{ params: Params; query: URLSearchParams }>;

/** Screens anyone may open. */
const publicRoutes: [string, Screen][] = [
  ['/sign-in', SignIn],
  ['/sign-up', SignUp],
  ['/accept-invitation', AcceptInvitation],
  ['/verify-email', VerifyEmail],
  ['/forgot-password', ForgotPassword],
  ['/reset-password', ResetPassword],
];

/** Screens of a signed-in user, with their place in the navigation. */
const privateRoutes: [string, Screen, string?][] = [
  ['/', Overview, 'Overview'],
  ['/get-started', GetStarted, 'Get started'],
  ['/keys', Keys, 'Keys'],
  ['/keys/:hash', KeyDetail],
  ['/projects', Projects, 'Projects'],
  ['/chargeback', WhoSpentIt, 'Chargeback'],
  ['/connections', Connections, 'Connections'],
  ['/connections/:id', ConnectionReconciliation],
  ['/budgets', Budgets, 'Budgets'],
  ['/alert-rules', AlertRules, 'Alert rules'],
  ['/alerts', Alerts, 'Alerts'],
  // The link in alert e-mail and webhooks: the inbox, that alert marked.
  ['/alerts/:id', Alerts],
  // Every act of enforcement: what budgets and anomaly rules stopped and released.
  ['/actions', Actions, 'Actions'],
  // The API's ingest keys, named for a newcomer; the URL stays.
  ['/ingest-keys', SendingKeys, 'Sending keys'],
  ['/prices', Prices, 'Prices'],
  ['/team', Team, 'Team'],
  ['/billing', Billing, 'Billing'],
  ['/settings', Settings, 'Settings'],
];

export function App() {
  const route = useRoute();
  const [, setVersion] = useState(0);
  useEffect(() => onSessionChange(() => setVersion((v) => v + 1)), []);

  // Move focus to the new screen's heading, so a screen reader announces where the user is.
  useEffect(() => {
    const h1 = document.getElementById('screen-title');
    if (h1 && document.activeElement !== h1 && route.path !== '/sign-in') h1.focus({ preventScroll: true });
  }, [route.path]);

  for (const [pattern, Component] of publicRoutes) {
    const params = match(pattern, route.path);
    if (params) return <Component params={params} query={route.query} />;
  }
  if (!hasSession()) {
    const here = route.path + (route.query.size ? `?${route.query}` : '');
    queueMicrotask(() => navigate(here === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, { replace: true }));
    return null;
  }
  return <SignedIn path={route.path} query={route.query} />;
}

function SignedIn({ path, query }: { path: string; query: URLSearchParams }) {
  const me = useLoad(() => ok(api.GET('/auth/me')), []);
  // At phone width the navigation folds behind "Menu" (styles.css), so the screen starts at the top; a move closes it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  if (me.error) {
    return (
      <main id="main">
        <ErrorBox error={me.error} />
      </main>
    );
  }
  if (!me.data) return <Loading what="Signing in" />;

  let screen = <NotFound />;
  for (const [pattern, Component] of privateRoutes) {
    const params = match(pattern, path);
    if (params) {
      screen = <Component params={params} query={query} />;
      break;
    }
  }
  const { user, account } = me.data;
  return (
    <MeContext.Provider value={{ me: me.data, reload: me.reload }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class={menuOpen ? 'top open' : 'top'}>
        <Link class="brand" href="/">
          Burnrate
        </Link>
        <button type="button" class="secondary menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav aria-label="Main" id="main-nav">
          <ul>
            {privateRoutes
              .filter((r) => r[2])
              .map(([href, , name]) => {
                const current = href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`);
                return (
                  <li key={href}>
                    <Link href={href} aria-current={current ? 'page' : undefined}>
                      {name}
                    </Link>
                  </li>
                );
              })}
          </ul>
        </nav>
        <div class="who">
          <span>
            {user.firstName} · {account.companyName} · <span class="muted">{user.role}</span>
          </span>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              signOut();
              navigate('/sign-in');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {screen}
      </main>
    </MeContext.Provider>
  );
}
