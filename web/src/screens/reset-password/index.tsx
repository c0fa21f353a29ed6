import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { endSession } from '../../api/session.ts';
import { Link } from '../../router.tsx';
import { Field, Form, NewPasswordField, useSubmit } from '../../ui/form.tsx';
import { ErrorBox, Screen } from '../../ui/states.tsx';

/** Opened from the reset e-mail: `/reset-password?token=…`. Every session of the user ends, this tab's too. */
export function ResetPassword({ query }: { query: URLSearchParams }) {
  const token = query.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const submit = useSubmit();
  document.title = 'Reset password · Burnrate';
  return (
    <main id="main" class="auth">
      <Screen title="Reset password">
        {!token && <ErrorBox error="This link has no token. Open the link from the e-mail again." />}
        {done ? (
          <p class="notice" role="status">
            Your password is changed. <Link href="/sign-in">Sign in</Link> with it.
          </p>
        ) : (
          <Form
            label="Reset password"
            error={submit.error}
            onSubmit={() =>
              void submit.run(async () => {
                await ok(api.POST('/auth/reset-password', { body: { token, password } }));
                endSession();
                setDone(true);
              })
            }
          >
            <NewPasswordField
              label="New password"
              required
              value={password}
              error={submit.fieldError('password', 'New password')}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
            <button type="submit" disabled={submit.busy || !token}>
              Set the new password
            </button>
          </Form>
        )}
      </Screen>
    </main>
  );
}
