/**
 * Said where alerts are set up and read (the rule form, Alerts): alert e-mail goes only to verified addresses, so an
 * unverified user is told that theirs are withheld, why, and how to verify (the link sent at sign-up, or a new one).
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { useSubmit } from './form.tsx';
import { useMe } from './me.tsx';
import { ErrorBox } from './states.tsx';

export function EmailWithheld() {
  const { me } = useMe();
  const resend = useSubmit();
  const [sent, setSent] = useState(false);
  if (me.user.emailVerified) return null;
  return (
    <div class="withheld" data-testid="email-withheld">
      <p style={{ margin: 0 }}>
        Alert e-mails are withheld from you until your address <strong>{me.user.email}</strong> is verified: open the link in the e-mail Burnrate sent
        to it.{' '}
        {sent ? (
          <span role="status">A new link is on its way.</span>
        ) : (
          <button type="button" class="link" disabled={resend.busy} onClick={() => void resend.run(() => ok(api.POST('/auth/resend-verification'))).then((d) => d && setSent(true))}>
            Send a new link
          </button>
        )}{' '}
        Until then alerts are listed in Alerts, and webhooks and Slack still receive them.
      </p>
      <ErrorBox error={resend.error} />
    </div>
  );
}
