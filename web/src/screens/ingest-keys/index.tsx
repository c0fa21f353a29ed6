import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { CopyButton } from '../../ui/copy.tsx';
import { Field, Form, useSubmit } from '../../ui/form.tsx';
import { when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { snippets } from './snippets.ts';

export function IngestKeys() {
  const isAdmin = useCan('admin');
  const list = useLoad(() => ok(api.GET('/ingest-keys')), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ key: string } | undefined>();
  const [tab, setTab] = useState(0);
  const create = useSubmit();
  const revoke = useSubmit();
  document.title = 'Ingest keys · Burnrate';
  const code = created ? snippets(location.origin, created.key) : [];
  return (
    <Screen title="Ingest keys">
      <p class="muted">Secrets your proxy or SDK sends (header <code>x-api-key</code>) with each batch of events.</p>
      {created && (
        <div class="card" aria-labelledby="new-key-title">
          <h2 id="new-key-title" style={{ marginTop: 0 }}>
            Your new ingest key
          </h2>
          <p>Copy it now: it is shown only once.</p>
          <p class="secret" data-testid="ingest-secret">
            {created.key}
          </p>
          <p class="actions">
            <CopyButton text={created.key} label="Copy the key" />
          </p>
          <h3>Send an event with it</h3>
          <div class="actions" role="group" aria-label="Language">
            {code.map(([lang], i) => (
              <button type="button" key={lang} class={i === tab ? undefined : 'secondary'} aria-pressed={i === tab} onClick={() => setTab(i)}>
                {lang}
              </button>
            ))}
          </div>
          <pre tabIndex={0} aria-label={`${code[tab]?.[0]} snippet`}>
            <code>{code[tab]?.[1]}</code>
          </pre>
          <p class="actions">
            <CopyButton text={code[tab]?.[1] ?? ''} label="Copy the snippet" />
            <button type="button" class="secondary" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </p>
        </div>
      )}
      {isAdmin && (
        <Form
          label="Create an ingest key"
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
            Create ingest key
          </button>
        </Form>
      )}
      <h2>Keys</h2>
      <ErrorBox error={revoke.error} />
      <Show state={list}>
        {({ items }) =>
          items.length === 0 ? (
            <Empty>No ingest keys yet.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Ingest keys">
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
