/**
 * One connection: status in words with the API's detail, last sync and last success, links to its reconciliation
 * and its keys; for admins Sync now (a 429 says when to try again, from Retry-After), Pause / Resume, Rotate key
 * (a password field, emptied once sent) and Disconnect behind a dialog that says what stays.
 */
import { useRef, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { Field, Form, FormActions, useSubmit } from '../../ui/form.tsx';
import { useEditor } from '../../ui/focus.ts';
import { utcDay, when } from '../../ui/format.ts';
import { ErrorBox } from '../../ui/states.tsx';
import { AdminKeyHelp } from './connect-form.tsx';
import { PROVIDER_NAMES, statusWords, waitWords } from './words.ts';

type Connection = Schemas['Connection'];

function RotateKey({ c, onDone, onCancel }: { c: Connection; onDone: () => void; onCancel: () => void }) {
  const [adminKey, setAdminKey] = useState('');
  const submit = useSubmit();
  return (
    <Form
      label={`Rotate the admin key of ${c.name}`}
      error={submit.error}
      onSubmit={() => {
        const key = adminKey.trim();
        setAdminKey('');
        void submit.run(() => ok(api.PATCH('/connections/{id}', { params: { path: { id: c.id } }, body: { adminKey: key } }))).then((done) => done && onDone());
      }}
    >
      <AdminKeyHelp provider={c.provider} />
      <Field
        label="New admin key"
        type="password"
        autoComplete="off"
        spellcheck={false}
        required
        autoFocus
        value={adminKey}
        error={submit.fieldError('adminKey', 'New admin key')}
        hint={`Checked with ${PROVIDER_NAMES[c.provider]} before it replaces the key ending ${c.keyHint}.`}
        onInput={(e) => setAdminKey(e.currentTarget.value)}
      />
      <FormActions busy={submit.busy} submitText={submit.busy ? 'Checking the key…' : 'Use this key'} onCancel={onCancel} />
    </Form>
  );
}

/** The confirmation before Disconnect: a modal dialog saying that imported spend and keys stay. */
function DisconnectDialog({ c, dialog, onDone }: { c: Connection; dialog: { current: HTMLDialogElement | null }; onDone: () => void }) {
  const submit = useSubmit();
  const provider = PROVIDER_NAMES[c.provider];
  const titleId = `disconnect-title-${c.id}`;
  return (
    <dialog ref={dialog} aria-labelledby={titleId} aria-describedby={`${titleId}-text`} class="card dialog">
      <h2 id={titleId} style={{ marginTop: 0 }}>
        Disconnect {c.name}?
      </h2>
      <div id={`${titleId}-text`}>
        <p>Burnrate stops reading {provider}'s usage and destroys the stored admin key.</p>
        <p>
          <strong>The spend already imported and the keys stay</strong>, with their history, budgets and labels. {provider} events sent to the ingest API
          are accepted again from then on.
        </p>
      </div>
      <ErrorBox error={submit.error} />
      <div class="actions">
        <button
          type="button"
          class="danger"
          disabled={submit.busy}
          onClick={() =>
            void submit.run(() => ok(api.DELETE('/connections/{id}', { params: { path: { id: c.id } } }))).then((done) => {
              if (!done) return;
              dialog.current?.close();
              onDone();
            })
          }
        >
          Disconnect
        </button>
        <button type="button" class="secondary" autoFocus onClick={() => dialog.current?.close()}>
          Keep it connected
        </button>
      </div>
    </dialog>
  );
}

export function ConnectionCard({
  c,
  canAdmin,
  syncing,
  onSyncAsked,
  onChanged,
}: {
  c: Connection;
  canAdmin: boolean;
  syncing: boolean;
  onSyncAsked: (at: string) => void;
  onChanged: () => void;
}) {
  const status = statusWords(c.status);
  const rotate = useEditor();
  const dialog = useRef<HTMLDialogElement>(null);
  const action = useSubmit();
  const [message, setMessage] = useState<string>();
  const titleId = `con-${c.id}`;

  const syncNow = () => {
    setMessage(undefined);
    void action.run(async () => {
      const { data, response, error } = await api.POST('/connections/{id}/sync', { params: { path: { id: c.id } } });
      if (response.status === 429) {
        setMessage(`A sync was asked for less than a minute ago. Sync now works again ${waitWords(response.headers.get('retry-after'))}.`);
        return;
      }
      const queued = await ok(Promise.resolve({ data, error, response }));
      setMessage('Sync queued: this page updates when it has run.');
      onSyncAsked(queued.queuedAt);
    });
  };
  const setEnforcement = (next: 'on' | 'off') => {
    setMessage(undefined);
    void action.run(() => ok(api.PATCH('/connections/{id}', { params: { path: { id: c.id } }, body: { enforcement: next } }))).then((done) => done && onChanged());
  };
  const setStatus = (next: 'active' | 'paused') => {
    setMessage(undefined);
    void action.run(() => ok(api.PATCH('/connections/{id}', { params: { path: { id: c.id } }, body: { status: next } }))).then((done) => done && onChanged());
  };

  return (
    <article class="card connection" aria-labelledby={titleId}>
      <h2 id={titleId} style={{ marginTop: 0 }}>
        {c.name} <span class={`badge ${status.badge}`}>{status.text}</span>
      </h2>
      <p class="muted" style={{ margin: '4px 0' }}>
        {PROVIDER_NAMES[c.provider]} · admin key ending {c.keyHint} · spend imported from {utcDay(c.importedFrom)}
      </p>
      {c.statusDetail && <p class={c.status === 'error' ? 'error' : 'notice warn'}>{c.statusDetail}</p>}
      <dl class="facts">
        <div>
          <dt>Last sync</dt>
          <dd>{c.lastSyncAt ? when(c.lastSyncAt) : 'not yet'}</dd>
        </div>
        <div>
          <dt>Last successful sync</dt>
          <dd>{c.lastSuccessAt ? when(c.lastSuccessAt) : 'not yet'}</dd>
        </div>
        <div>
          <dt>Budgets may stop spend</dt>
          <dd>
            {c.enforcement === 'on'
              ? c.provider === 'openai'
                ? 'Yes: project and account budgets set projects’ hard limits at OpenAI'
                : c.provider === 'openrouter'
                  ? 'Yes: a stop budget disables keys at OpenRouter'
                  : 'Yes: a stop budget sets keys inactive at Anthropic'
              : 'No: budgets here only alert'}
          </dd>
        </div>
      </dl>
      {syncing && (
        <p class="muted" aria-live="polite">
          {c.lastSyncAt === null ? 'The first sync is running…' : 'Waiting for the sync to run…'}
        </p>
      )}
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
      <ErrorBox error={action.error} />
      <p class="actions">
        <Link href={`/connections/${c.id}`} aria-describedby={titleId}>
          Computed vs billed
        </Link>
        <Link href={`/keys?source=connection&provider=${c.provider}`} aria-describedby={titleId}>
          Its keys
        </Link>
      </p>
      {canAdmin && !rotate.editing && (
        <div class="actions">
          {c.status !== 'paused' && (
            <button type="button" disabled={action.busy} aria-describedby={titleId} onClick={syncNow}>
              Sync now
            </button>
          )}
          {c.status === 'paused' ? (
            <button type="button" class="secondary" disabled={action.busy} aria-describedby={titleId} onClick={() => setStatus('active')}>
              Resume
            </button>
          ) : (
            <button type="button" class="secondary" disabled={action.busy} aria-describedby={titleId} onClick={() => setStatus('paused')}>
              Pause
            </button>
          )}
          <button type="button" class="secondary" ref={rotate.opener} aria-describedby={titleId} onClick={rotate.open}>
            Rotate key
          </button>
          <button type="button" class="secondary" disabled={action.busy} aria-describedby={titleId} onClick={() => setEnforcement(c.enforcement === 'on' ? 'off' : 'on')}>
            {c.enforcement === 'on' ? 'Stop letting budgets act' : 'Let budgets stop spend'}
          </button>
          <button type="button" class="secondary" aria-describedby={titleId} onClick={() => dialog.current?.showModal()}>
            Disconnect
          </button>
        </div>
      )}
      {canAdmin && rotate.editing && (
        <RotateKey
          c={c}
          onCancel={rotate.close}
          onDone={() => {
            rotate.close();
            setMessage('The new admin key is in use.');
            onChanged();
          }}
        />
      )}
      {canAdmin && <DisconnectDialog c={c} dialog={dialog} onDone={onChanged} />}
    </article>
  );
}
