import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { startSession } from '../../api/session.ts';
import { Link, navigate } from '../../router.tsx';
import { Field, Form, useSubmit } from '../../ui/form.tsx';
import { safeNext } from '../../ui/next.ts';
import { Product } from '../../ui/product.tsx';
import { Screen } from '../../ui/states.tsx';

export function SignIn({ query }: { query: URLSearchParams }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = useSubmit();
  document.title = 'Sign in · Burnrate';
  return (
    <main id="main" class="auth">
      <Product />
      <Screen title="Sign in">
        {query.get('next') && <p class="muted">Sign in to continue.</p>}
        <Form
          label="Sign in"
          error={submit.error}
          onSubmit={() =>
            void submit.run(async () => {
              const session = await ok(api.POST('/auth/login', { body: { email, password } }));
              startSession(session);
              navigate(safeNext(query.get('next')), { replace: true });
            })
          }
        >
          <Field label="E-mail" type="email" autocomplete="email" required value={email} error={submit.fieldError('email', 'E-mail')} onInput={(e) => setEmail(e.currentTarget.value)} />
          <Field label="Password" type="password" autocomplete="current-password" required value={password} error={submit.fieldError('password', 'Password')} onInput={(e) => setPassword(e.currentTarget.value)} />
          <button type="submit" disabled={submit.busy}>
            {submit.busy ? 'Signing in…' : 'Sign in'}
          </button>
        </Form>
        <p>
          <Link href="/forgot-password">Forgot password?</Link>
        </p>
        <p>
          New here? <Link href="/sign-up">Create your account</Link>
        </p>
      </Screen>
    </main>
  );
}
