import { useEditor } from '../../ui/focus.ts';
import { api, ok, type Schemas } from '../../api/client.ts';
import { useSubmit } from '../../ui/form.tsx';
import { money, UTC_NOTE, when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { keyNames } from '../../ui/key-names.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { anomalyWords, RuleForm } from './rule-form.tsx';

type Rule = Schemas['Rule'];

function describe(rule: Rule, names: Map<string, string>): string {
  switch (rule.type) {
    case 'cost_threshold': {
      const key = rule.config.keyHash;
      return `When ${rule.config.period} spend ${key ? `of ${names.get(key) ?? key.slice(0, 12)} ` : ''}passes ${money(rule.config.threshold)}`;
    }
    case 'spend_spike':
      return `When a day's spend is ${rule.config.multiplier}× the usual (at least ${money(rule.config.minSpend)})`;
    case 'new_key':
      return 'When a new key appears';
    case 'spend_anomaly':
      return anomalyWords(rule.config);
  }
}

function RuleRow({ r, names, canEdit, onChanged }: { r: Rule; names: Map<string, string>; canEdit: boolean; onChanged: () => void }) {
  const editor = useEditor();
  const change = useSubmit();
  return (
    <>
      <tr>
        <td>{r.name}</td>
        <td>{describe(r, names)}</td>
        <td>{r.channels.join(', ')}</td>
        <td>{when(r.lastTriggeredAt)}</td>
        <td>{r.isActive ? 'Active' : 'Paused'}</td>
        {canEdit && (
          <td class="actions">
            <button type="button" class="secondary" ref={editor.opener} aria-label={`Edit rule ${r.name}`} aria-expanded={editor.editing} onClick={editor.editing ? editor.close : editor.open}>
              Edit
            </button>
            <button
              type="button"
              class="secondary"
              aria-label={`${r.isActive ? 'Pause' : 'Resume'} rule ${r.name}`}
              onClick={() => void change.run(() => ok(api.PATCH('/alert-rules/{id}', { params: { path: { id: r.id } }, body: { isActive: !r.isActive } }))).then(onChanged)}
            >
              {r.isActive ? 'Pause' : 'Resume'}
            </button>
            <button
              type="button"
              class="secondary"
              aria-label={`Delete rule ${r.name}`}
              onClick={() => {
                if (confirm(`Delete the rule ${r.name}?`)) {
                  void change.run(() => ok(api.DELETE('/alert-rules/{id}', { params: { path: { id: r.id } } }))).then(onChanged);
                }
              }}
            >
              Delete
            </button>
            <ErrorBox error={change.error} />
          </td>
        )}
      </tr>
      {canEdit && editor.editing && (
        <tr>
          <td colSpan={6}>
            <RuleForm
              rule={r}
              keyLabel={r.type === 'cost_threshold' && r.config.keyHash ? names.get(r.config.keyHash) : undefined}
              onCancel={editor.close}
              onDone={() => {
                editor.close();
                onChanged();
              }}
            />
          </td>
        </tr>
      )}
    </>
  );
}

export function AlertRules() {
  const canEdit = useCan('member');
  const rules = useLoad(async () => {
    const { items } = await ok(api.GET('/alert-rules'));
    return { items, names: await keyNames(items.map((r) => (r.type === 'cost_threshold' ? r.config.keyHash : undefined))) };
  }, []);
  document.title = 'Alert rules · Burnrate';
  return (
    <Screen title="Alert rules">
      <p class="muted">{UTC_NOTE}</p>
      <Show state={rules}>
        {({ items, names }) =>
          items.length === 0 ? (
            <Empty>No alert rules yet.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Alert rules">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">When</th>
                    <th scope="col">Channels</th>
                    <th scope="col">Last triggered</th>
                    <th scope="col">State</th>
                    {canEdit && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {items.map((r) => (
                    <RuleRow key={r.id} r={r} names={names} canEdit={canEdit} onChanged={rules.reload} />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      {canEdit && (
        <>
          <h2>New rule</h2>
          <RuleForm onDone={rules.reload} />
        </>
      )}
    </Screen>
  );
}
