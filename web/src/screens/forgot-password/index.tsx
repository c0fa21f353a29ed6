import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { Field, Form, useSubmit } from '../../ui/form.tsx';
import { Screen } from '../../ui/states.tsx';

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const submit = useSubmit();
  document.title = 'Forgot password · Burnrate';
  return (
    <main id="main" class="auth">
      <Screen title="Forgot password">
        {sent ? (
          <p class="notice" role="status">
            If {email} has an account, a link to reset its password is on its way. It works for one hour.
          </p>
        ) : (
          <Form
            label="Forgot password"
            error={submit.error}
            onSubmit={() =>
              void submit.run(async () => {
                await ok(api.POST('/auth/forgot-password', { body: { email } }));
                setSent(true);
              })
            }
          >
            <Field label="E-mail" type="email" autocomplete="email" required value={email} error={submit.fieldError('email', 'E-mail')} onInput={(e) => setEmail(e.currentTarget.value)} />
            <button type="submit" disabled={submit.busy}>
              Send the reset link
            </button>
          </Form>
        )}
        <p>
          <Link href="/sign-in">Back to sign in</Link>
        </p>
      </Screen>
    </main>
  );
}
