import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { startSession } from '../../api/session.ts';
import { navigate } from '../../router.tsx';
import { Field, Form, NewPasswordField, useSubmit } from '../../ui/form.tsx';
import { ErrorBox, Screen } from '../../ui/states.tsx';

/** Opened from the invitation e-mail: `/accept-invitation?token=…&company=…` (the company name is optional). */
export function AcceptInvitation({ query }: { query: URLSearchParams }) {
  const token = query.get('token') ?? '';
  const company = query.get('company');
  const [form, setForm] = useState({ firstName: '', lastName: '', password: '' });
  const submit = useSubmit();
  const set = (name: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [name]: e.currentTarget.value });
  const title = company ? `Join ${company}` : 'Join your team';
  document.title = `${title} · Burnrate`;
  return (
    <main id="main" class="auth">
      <Screen title={title}>
        {!token && <ErrorBox error="This link has no invitation token. Open the link from the e-mail again." />}
        <Form
          label={title}
          error={submit.error}
          onSubmit={() =>
            void submit.run(async () => {
              startSession(await ok(api.POST('/auth/accept-invitation', { body: { token, ...form } })));
              navigate('/', { replace: true });
            })
          }
        >
          <Field label="First name" autocomplete="given-name" required value={form.firstName} error={submit.fieldError('firstName', 'First name')} onInput={set('firstName')} />
          <Field label="Last name" autocomplete="family-name" required value={form.lastName} error={submit.fieldError('lastName', 'Last name')} onInput={set('lastName')} />
          <NewPasswordField
            label="Password"
            required
            value={form.password}
            error={submit.fieldError('password', 'Password')}
            onInput={set('password')}
          />
          <button type="submit" disabled={submit.busy || !token}>
            Accept the invitation
          </button>
        </Form>
      </Screen>
    </main>
  );
}
