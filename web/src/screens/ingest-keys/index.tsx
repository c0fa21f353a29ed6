import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, useSubmit } from '../../ui/form.tsx';
import { when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { Link } from '../../router.tsx';
import { QuickStart, SecretCard } from './quick-start.tsx';

/** Sending keys (the API's ingest keys, URL /ingest-keys): the secrets a proxy or SDK sends events with. */
export function SendingKeys() {
  const isAdmin = useCan('admin');
  const list = useLoad(() => ok(api.GET('/ingest-keys')), []);
  // Which providers are connected: their events are refused, so the quick start reports another one.
  const connections = useLoad(() => ok(api.GET('/connections')), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ key: string } | undefined>();
  const create = useSubmit();
  const revoke = useSubmit();
  document.title = 'Sending keys · Burnrate';
  return (
    <Screen title="Sending keys">
      <p class="muted">
        For your proxy or SDK: the secret it sends (header <code>x-api-key</code>) with the events it reports (the API’s ingest keys). New here? <Link href="/get-started">Get started</Link> walks you
        through it.
      </p>
      {created && (
        <SecretCard secret={created.key}>
          <h3>Send an event with it</h3>
          <QuickStart ingestKey={created.key} connected={connections.data?.items.map((c) => c.provider)} />
          <p class="actions">
            <button type="button" class="secondary" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </p>
        </SecretCard>
      )}
      {isAdmin && (
        <Form
          label="Create a sending key"
          error={create.error}
          onSubmit={() =>
            void create.run(async () => {
              setCreated(await ok(api.POST('/ingest-keys', { body: name.trim() ? { name: name.trim() } : {} })));
              setName('');
              list.reload();
            })
          }
        >
          <Field label="Name" hint="Where it is used, e.g. “production proxy”." value={name} error={create.fieldError('name', 'Name')} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit" disabled={create.busy}>
            Create sending key
          </button>
        </Form>
      )}
      <h2>Your sending keys</h2>
      <ErrorBox error={revoke.error} />
      <Show state={list}>
        {({ items }) =>
          items.length === 0 ? (
            <Empty>No sending keys yet.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Sending keys">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Starts with</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    {isAdmin && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {items.map((k) => (
                    <tr key={k.id}>
                      <td>{k.name}</td>
                      <td>
                        <code>{k.prefix}…</code>
                      </td>
                      <td>{when(k.createdAt)}</td>
                      <td>{when(k.lastUsedAt)}</td>
                      {isAdmin && (
                        <td>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() => {
                              if (confirm(`Revoke ${k.name}? Events sent with it will be refused.`)) {
                                void revoke.run(() => ok(api.DELETE('/ingest-keys/{id}', { params: { path: { id: k.id } } }))).then(list.reload);
                              }
                            }}
                          >
                            Revoke {k.name}
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </Screen>
  );
}
