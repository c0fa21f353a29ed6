import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { startSession } from '../../api/session.ts';
import { navigate } from '../../router.tsx';
import { Field, Form, NewPasswordField, useSubmit } from '../../ui/form.tsx';
import { when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { ErrorBox, Loading, Screen } from '../../ui/states.tsx';

/**
 * Opened from the invitation e-mail: `/accept-invitation?token=…`. What the invitation is — the company, the address,
 * the role — comes from the server (GET /auth/invitation), never from the URL: a link can't dress itself up as
 * another company. Anything else in the query string is ignored.
 */
export function AcceptInvitation({ query }: { query: URLSearchParams }) {
  const token = query.get('token') ?? '';
  const invitation = useLoad(
    () => (token ? ok(api.GET('/auth/invitation', { params: { query: { token } } })) : Promise.reject(new Error('This link has no invitation token. Open the link from the e-mail again.'))),
    [token],
  );
  const [form, setForm] = useState({ firstName: '', lastName: '', password: '' });
  const submit = useSubmit();
  const set = (name: keyof typeof form) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [name]: e.currentTarget.value });
  const shown = invitation.data;
  const title = shown ? `Join ${shown.company}` : 'Join your team';
  document.title = `${title} · Burnrate`;
  return (
    <main id="main" class="auth">
      <Screen title={title}>
        {invitation.loading && <Loading what="Reading the invitation" />}
        <ErrorBox error={invitation.error} />
        {shown && (
          <p>
            You are invited as {shown.role === 'admin' ? 'an' : 'a'} <strong>{shown.role}</strong> with the address <strong>{shown.email}</strong>. The link
            works until {when(shown.expiresAt)} UTC.
          </p>
        )}
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
          <button type="submit" disabled={submit.busy || !shown}>
            Accept the invitation
          </button>
        </Form>
      </Screen>
    </main>
  );
}
