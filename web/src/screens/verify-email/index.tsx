import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { hasSession } from '../../api/session.ts';
import { Link } from '../../router.tsx';
import { ErrorBox, Loading, Screen } from '../../ui/states.tsx';

/** Opened from the e-mail's link `/verify-email?token=…`: proves the address at once (no auth needed). */
export function VerifyEmail({ query }: { query: URLSearchParams }) {
  const token = query.get('token') ?? '';
  const [state, setState] = useState<'working' | 'done' | Error>('working');
  useEffect(() => {
    if (!token) return setState(new Error('This link has no token. Open the link from the e-mail again.'));
    ok(api.POST('/auth/verify-email', { body: { token } })).then(
      () => setState('done'),
      (error: Error) => setState(error),
    );
  }, [token]);
  document.title = 'Verify your e-mail · Burnrate';
  return (
    <main id="main" class="auth">
      <Screen title="Verify your e-mail">
        {state === 'working' && <Loading what="Verifying your address" />}
        {state === 'done' && (
          <p class="notice" role="status">
            Your e-mail address is verified: alert e-mail can reach you now.
          </p>
        )}
        {state instanceof Error && <ErrorBox error={state} />}
        <p>{hasSession() ? <Link href="/">Go to the overview</Link> : <Link href="/sign-in">Sign in</Link>}</p>
      </Screen>
    </main>
  );
}
