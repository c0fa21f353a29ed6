import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { Field, Form, NewPasswordField, useSubmit } from '../../ui/form.tsx';
import { useMe } from '../../ui/me.tsx';
import { ErrorBox } from '../../ui/states.tsx';

/** Own names and alert e-mail on/off (PATCH /auth/me); resend the verification link. */
export function Profile() {
  const { me, reload } = useMe();
  const [form, setForm] = useState({ firstName: me.user.firstName, lastName: me.user.lastName });
  const save = useSubmit();
  const resend = useSubmit();
  const [saved, setSaved] = useState('');
  return (
    <>
      <h2>Profile</h2>
      <Form
        label="Profile"
        error={save.error}
        onSubmit={() =>
          void save.run(() => ok(api.PATCH('/auth/me', { body: form }))).then((done) => {
            if (done) {
              setSaved('Profile saved.');
              reload();
            }
          })
        }
      >
        <Field label="First name" autocomplete="given-name" value={form.firstName} error={save.fieldError('firstName', 'First name')} onInput={(e) => setForm({ ...form, firstName: e.currentTarget.value })} />
        <Field label="Last name" autocomplete="family-name" value={form.lastName} error={save.fieldError('lastName', 'Last name')} onInput={(e) => setForm({ ...form, lastName: e.currentTarget.value })} />
        <p>
          E-mail: {me.user.email} {me.user.emailVerified ? '(verified)' : '(not verified yet)'}{' '}
          {!me.user.emailVerified && (
            <button type="button" class="link" disabled={resend.busy} onClick={() => void resend.run(() => ok(api.POST('/auth/resend-verification'))).then((d) => d && setSaved('Verification link sent.'))}>
              Send the verification link again
            </button>
          )}
        </p>
        <ErrorBox error={resend.error} />
        <label class="check">
          <input
            type="checkbox"
            checked={me.user.alertEmails}
            onChange={(e) =>
              void save.run(() => ok(api.PATCH('/auth/me', { body: { alertEmails: e.currentTarget.checked } }))).then((done) => {
                if (done) {
                  setSaved('Alert e-mail setting saved.');
                  reload();
                }
              })
            }
          />{' '}
          Send me alert e-mail (only to a verified address)
        </label>
        <button type="submit" disabled={save.busy}>
          Save profile
        </button>
        <p role="status" class="muted">
          {saved}
        </p>
      </Form>
    </>
  );
}

export function ChangePassword() {
  const [form, setForm] = useState({ currentPassword: '', newPassword: '' });
  const [done, setDone] = useState(false);
  const change = useSubmit();
  return (
    <>
      <h2>Password</h2>
      <Form
        label="Change password"
        error={change.error && !change.fieldError('currentPassword') && !change.fieldError('newPassword') ? change.error : undefined}
        onSubmit={() =>
          void change.run(() => ok(api.POST('/auth/change-password', { body: form }))).then((d) => {
            setDone(d);
            if (d) setForm({ currentPassword: '', newPassword: '' });
          })
        }
      >
        <Field label="Current password" type="password" autocomplete="current-password" value={form.currentPassword} error={change.fieldError('currentPassword', 'Current password')} onInput={(e) => setForm({ ...form, currentPassword: e.currentTarget.value })} />
        <NewPasswordField
          label="New password"
          value={form.newPassword}
          error={change.fieldError('newPassword', 'New password')}
          onInput={(e) => setForm({ ...form, newPassword: e.currentTarget.value })}
        />
        <button type="submit" disabled={change.busy}>
          Change password
        </button>
        {done && (
          <p class="notice" role="status">
            Password changed; your other sessions are signed out.
          </p>
        )}
      </Form>
    </>
  );
}
