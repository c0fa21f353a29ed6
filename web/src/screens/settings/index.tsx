import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { CopyButton } from '../../ui/copy.tsx';
import { useSubmit } from '../../ui/form.tsx';
import { when } from '../../ui/format.ts';
import { useCan, useMe } from '../../ui/me.tsx';
import { ErrorBox, Screen } from '../../ui/states.tsx';
import { ChangePassword, Profile } from './account.tsx';

export function Settings() {
  const { me } = useMe();
  const isAdmin = useCan('admin');
  document.title = 'Settings · Burnrate';
  return (
    <Screen title="Settings">
      <p class="muted">
        {me.user.email} · {me.user.role} of {me.account.companyName}
      </p>
      <Profile />
      <ChangePassword />
      {isAdmin && <WebhookSecret />}
    </Screen>
  );
}

function WebhookSecret() {
  const [secret, setSecret] = useState<Schemas['WebhookSecret'] | undefined>();
  const run = useSubmit();
  return (
    <>
      <h2>Webhook signing secret</h2>
      <p class="muted">Webhook deliveries are signed with it, so your receiver can check they come from us.</p>
      {secret ? (
        <div class="card">
          <p class="secret">{secret.secret}</p>
          <p class="muted">
            Header <code>{secret.header}</code>, {secret.algorithm}, {secret.format}
            {secret.previousSecretExpiresAt ? ` · the previous secret works until ${when(secret.previousSecretExpiresAt)}` : ''}
          </p>
          <p class="actions">
            <CopyButton text={secret.secret} label="Copy the secret" />
            <button
              type="button"
              class="secondary"
              disabled={run.busy}
              onClick={() => {
                if (confirm('Rotate the secret? The old one keeps working for a while.')) {
                  void run.run(async () => setSecret(await ok(api.POST('/webhook-secret/rotate'))));
                }
              }}
            >
              Rotate the secret
            </button>
          </p>
        </div>
      ) : (
        <button type="button" class="secondary" disabled={run.busy} onClick={() => void run.run(async () => setSecret(await ok(api.GET('/webhook-secret'))))}>
          Show the secret
        </button>
      )}
      <ErrorBox error={run.error} />
    </>
  );
}
