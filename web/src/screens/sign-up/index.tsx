import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { startSession } from '../../api/session.ts';
import { Link, navigate } from '../../router.tsx';
import { Field, Form, NewPasswordField, useSubmit } from '../../ui/form.tsx';
import { Product } from '../../ui/product.tsx';
import { Screen } from '../../ui/states.tsx';

export function SignUp() {
  const [form, setForm] = useState({ companyName: '', firstName: '', lastName: '', email: '', password: '' });
  const submit = useSubmit();
  const set = (name: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [name]: e.currentTarget.value });
  document.title = 'Create your account · Burnrate';
  return (
    <main id="main" class="auth">
      <Product />
      <Screen title="Create your account">
        <Form
          label="Create your account"
          error={submit.error}
          onSubmit={() =>
            void submit.run(async () => {
              startSession(await ok(api.POST('/auth/register', { body: form })));
              navigate('/get-started', { replace: true });
            })
          }
        >
          <Field label="Company" autocomplete="organization" required value={form.companyName} error={submit.fieldError('companyName', 'Company')} onInput={set('companyName')} />
          <Field label="First name" autocomplete="given-name" required value={form.firstName} error={submit.fieldError('firstName', 'First name')} onInput={set('firstName')} />
          <Field label="Last name" autocomplete="family-name" required value={form.lastName} error={submit.fieldError('lastName', 'Last name')} onInput={set('lastName')} />
          <Field label="E-mail" type="email" autocomplete="email" required value={form.email} error={submit.fieldError('email', 'E-mail')} onInput={set('email')} />
          <NewPasswordField
            label="Password"
            required
            value={form.password}
            error={submit.fieldError('password', 'Password')}
            onInput={set('password')}
          />
          <button type="submit" disabled={submit.busy}>
            {submit.busy ? 'Creating…' : 'Create account'}
          </button>
        </Form>
        <p>
          Have an account? <Link href="/sign-in">Sign in</Link>
        </p>
      </Screen>
    </main>
  );
}
