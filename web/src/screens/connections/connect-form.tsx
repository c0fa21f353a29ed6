/**
 * Connect a provider: which one, its admin key (a password field; the key is sent once and never shown back, and the
 * field is emptied whatever the answer) and an optional name, with where to create the key and what it needs.
 */
import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { Field, Form, FormActions, Select, useSubmit } from '../../ui/form.tsx';
import { ADMIN_KEY_HELP, PROVIDER_NAMES, type Provider } from './words.ts';

export function AdminKeyHelp({ provider, id }: { provider: Provider; id?: string }) {
  const help = ADMIN_KEY_HELP[provider];
  return (
    <div class="card help" id={id}>
      <p style={{ marginTop: 0 }}>
        <strong>
          Where to create an {PROVIDER_NAMES[provider]} {provider === 'openrouter' ? 'management key' : 'admin key'}:
        </strong>{' '}
        {help.where}
      </p>
      <p>{help.who}</p>
      <p style={{ marginBottom: 0 }}>{help.looks}</p>
    </div>
  );
}

export function ConnectForm({ providers, onConnected }: { providers: Provider[]; onConnected: () => void }) {
  const [provider, setProvider] = useState<Provider>(providers[0]!);
  const [adminKey, setAdminKey] = useState('');
  const [name, setName] = useState('');
  const [done, setDone] = useState<string>();
  const submit = useSubmit();
  const chosen = providers.includes(provider) ? provider : providers[0]!;
  return (
    <section aria-labelledby="connect-title">
      <h2 id="connect-title">Connect a provider</h2>
      {done && (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      <Form
        label="Connect a provider"
        error={submit.error}
        onSubmit={() => {
          const key = adminKey.trim();
          // The key lives in this form only until it is sent.
          setAdminKey('');
          setDone(undefined);
          void submit
            .run(() => ok(api.POST('/connections', { body: { provider: chosen, adminKey: key, ...(name.trim() ? { name: name.trim() } : {}) } })))
            .then((connected) => {
              if (!connected) return;
              setName('');
              // What stays on screen says nothing of the sync's progress: the card says that, and keeps it current.
              setDone(`${PROVIDER_NAMES[chosen]} is connected. Its card above shows how its syncs go; its keys appear on Keys within a minute.`);
              onConnected();
            });
        }}
      >
        <Select label="Provider" value={chosen} options={providers.map((p) => [p, PROVIDER_NAMES[p]] as const)} onChange={(e) => setProvider(e.currentTarget.value as Provider)} />
        <AdminKeyHelp provider={chosen} />
        <Field
          label={chosen === 'openrouter' ? 'Management key' : 'Admin key'}
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={adminKey}
          error={submit.fieldError('adminKey', chosen === 'openrouter' ? 'Management key' : 'Admin key')}
          hint="Stored encrypted and never shown again. Reading usage needs a key that may read; budgets that stop spend need a key that may also write (a read-only admin key can't switch keys off or set limits)."
          onInput={(e) => setAdminKey(e.currentTarget.value)}
        />
        <Field label="Name (optional)" value={name} placeholder={`${PROVIDER_NAMES[chosen]} organization`} error={submit.fieldError('name', 'Name')} onInput={(e) => setName(e.currentTarget.value)} />
        <FormActions busy={submit.busy} submitText={submit.busy ? 'Checking the key…' : `Connect ${PROVIDER_NAMES[chosen]}`} />
      </Form>
    </section>
  );
}
