/** The budget form, for a new budget (POST) and for editing one in place (PATCH): the same fields, the same words. */
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, FormActions, Select, useSubmit } from '../../ui/form.tsx';
import { KeyPicker } from '../../ui/key-picker.tsx';

type Budget = Schemas['Budget'];
type Scope = 'ACCOUNT' | 'KEY' | 'PROJECT';

/**
 * What "Stop spend at the limit" does for this scope (or why it can't): the key's source and provider decide for a
 * key; the connection's provider for a project. The API checks again (a 400 says why, under the checkbox).
 */
function useLever(scope: Scope, keyHash: string, connection: Schemas['Connection'] | undefined): { offered: boolean; words: string } {
  const [key, setKey] = useState<Schemas['KeyDetail'] | undefined>();
  useEffect(() => {
    setKey(undefined);
    if (scope !== 'KEY' || !/^[0-9a-f]{64}$/.test(keyHash)) return;
    void api.GET('/keys/{hash}', { params: { path: { hash: keyHash } } }).then(({ data }) => setKey(data));
  }, [scope, keyHash]);
  if (scope === 'ACCOUNT') {
    return { offered: true, words: 'At the limit, keys of connections that let budgets act are stopped (Anthropic: set inactive) and keys that send events are refused by the reporter.' };
  }
  if (scope === 'PROJECT') {
    if (!connection) return { offered: false, words: 'Choose a connection first.' };
    if (connection.enforcement !== 'on') return { offered: false, words: `The connection ${connection.name} does not let budgets act: an admin turns that on on the Connections page.` };
    return connection.provider === 'openai'
      ? { offered: true, words: 'Sets the project’s own hard spend limit at OpenAI (OpenAI refuses its requests past it; its enforcement lags a little).' }
      : { offered: true, words: 'At the limit, every active key of the workspace is set inactive at Anthropic; exactly those are set active again on release.' };
  }
  if (!key) return { offered: false, words: 'Choose a key first.' };
  if (key.source !== 'connection') return { offered: true, words: 'At the limit, the Burnrate reporter refuses this key’s calls (answered with a 429, never sent).' };
  if (key.provider === 'openai') return { offered: false, words: 'OpenAI can pause no single key: make a budget on its project instead.' };
  if (key.provider === 'anthropic') return { offered: true, words: 'At the limit, Anthropic sets this key inactive; it is set active again on release or at the month’s start.' };
  return { offered: false, words: 'This provider offers Burnrate no way to stop a key.' };
}

export function BudgetForm({ budget, keyLabel, onDone, onCancel }: { budget?: Budget; keyLabel?: string | undefined; onDone: () => void; onCancel?: () => void }) {
  const [form, setForm] = useState({
    name: budget?.name ?? '',
    monthlyLimit: budget ? String(budget.monthlyLimit) : '',
    alertThreshold: String(budget?.alertThreshold ?? 80),
    scope: budget?.scope ?? ('ACCOUNT' as Scope),
    keyHash: budget?.keyHash ?? '',
    connectionId: budget?.connectionId ?? '',
    projectId: budget?.projectId ?? '',
    stop: budget?.action === 'stop',
  });
  const [connections, setConnections] = useState<Schemas['Connection'][]>([]);
  useEffect(() => {
    void api.GET('/connections').then(({ data }) => setConnections(data?.items ?? []));
  }, []);
  const lever = useLever(form.scope, form.keyHash, connections.find((c) => c.id === form.connectionId));
  const submit = useSubmit();
  const title = budget ? `Edit budget ${budget.name ?? ''}`.trim() : 'New budget';
  const body = {
    name: form.name.trim() || null,
    monthlyLimit: Number(form.monthlyLimit),
    alertThreshold: Number(form.alertThreshold),
    scope: form.scope,
    action: form.stop ? ('stop' as const) : ('notify' as const),
    ...(form.scope === 'KEY' ? { keyHash: form.keyHash } : {}),
    ...(form.scope === 'PROJECT' ? { connectionId: form.connectionId, projectId: form.projectId.trim() } : {}),
  };
  return (
    <Form
      label={title}
      error={submit.error}
      onSubmit={() =>
        void submit
          .run(() =>
            budget
              ? ok(api.PATCH('/budgets/{id}', { params: { path: { id: budget.id } }, body: { ...body, ...(form.scope !== 'KEY' ? { keyHash: null } : {}), ...(form.scope !== 'PROJECT' ? { connectionId: null, projectId: null } : {}) } }))
              : ok(api.POST('/budgets', { body })),
          )
          .then((done) => {
            if (!done) return;
            if (!budget) setForm({ ...form, name: '', monthlyLimit: '' });
            onDone();
          })
      }
    >
      <Field label="Name" value={form.name} error={submit.fieldError('name', 'Name')} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
      <Field
        label="Monthly limit (US dollars)"
        inputMode="decimal"
        required
        value={form.monthlyLimit}
        error={submit.fieldError('monthlyLimit', 'Monthly limit (US dollars)')}
        onInput={(e) => setForm({ ...form, monthlyLimit: e.currentTarget.value })}
      />
      <Field
        label="Alert at (% of the limit)"
        inputMode="decimal"
        required
        value={form.alertThreshold}
        error={submit.fieldError('alertThreshold', 'Alert at (% of the limit)')}
        onInput={(e) => setForm({ ...form, alertThreshold: e.currentTarget.value })}
      />
      <Select
        label="Applies to"
        value={form.scope}
        options={[
          ['ACCOUNT', 'The whole account'],
          ['KEY', 'One key'],
          ['PROJECT', 'One project (OpenAI project, Anthropic workspace)'],
        ]}
        onChange={(e) => setForm({ ...form, scope: e.currentTarget.value as Scope })}
      />
      {form.scope === 'PROJECT' && (
        <>
          <Select
            label="Connection"
            value={form.connectionId}
            options={[['', 'Choose a connection'], ...connections.map((c): [string, string] => [c.id, c.name])]}
            onChange={(e) => setForm({ ...form, connectionId: e.currentTarget.value })}
          />
          <Field
            label="Project or workspace id"
            value={form.projectId}
            hint="As the key page shows it under Project (proj_… or wrkspc_…)."
            error={submit.fieldError('projectId', 'Project or workspace id')}
            onInput={(e) => setForm({ ...form, projectId: e.currentTarget.value })}
          />
        </>
      )}
      {form.scope === 'KEY' && (
        <KeyPicker label="Key" value={form.keyHash} chosenName={form.keyHash === budget?.keyHash ? keyLabel : undefined} error={submit.fieldError('keyHash', 'Key')} onChange={(keyHash) => setForm({ ...form, keyHash })} />
      )}
      <label class="check">
        <input type="checkbox" checked={form.stop} disabled={!lever.offered && !form.stop} onChange={(e) => setForm({ ...form, stop: e.currentTarget.checked })} /> Stop spend at the limit
      </label>
      <p class={lever.offered ? 'muted' : 'notice warn'} style={{ margin: '4px 0' }}>
        {lever.words}
      </p>
      {submit.fieldError('action', 'Stop spend at the limit') && <p class="error">{submit.fieldError('action', 'Stop spend at the limit')}</p>}
      <FormActions busy={submit.busy} submitText={budget ? 'Save budget' : 'Create budget'} onCancel={onCancel} />
    </Form>
  );
}
