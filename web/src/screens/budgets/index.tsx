import { useState } from 'preact/hooks';
import { api, ok } from '../../api/client.ts';
import { Field, Form, Select, useSubmit } from '../../ui/form.tsx';
import { money, percent } from '../../ui/format.ts';
import { keyName } from '../../ui/key-name.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';

const STATUS_TEXT = { ok: 'On track', warning: 'Warning', exceeded: 'Exceeded' } as const;

export function Budgets() {
  const canEdit = useCan('member');
  const budgets = useLoad(() => ok(api.GET('/budgets')), []);
  const keys = useLoad(() => ok(api.GET('/keys', { params: { query: { limit: 100 } } })), []);
  const [form, setForm] = useState({ name: '', monthlyLimit: '', alertThreshold: '80', scope: 'ACCOUNT' as 'ACCOUNT' | 'KEY', keyHash: '' });
  const create = useSubmit();
  const remove = useSubmit();
  document.title = 'Budgets · Burnrate';
  return (
    <Screen title="Budgets">
      <p class="muted">Monthly limits on spend (calendar months, UTC).</p>
      <ErrorBox error={remove.error} />
      <Show state={budgets}>
        {({ items }) =>
          items.length === 0 ? (
            <Empty>No budgets yet.</Empty>
          ) : (
            <ul class="cards" aria-label="Budgets">
              {items.map((b) => {
                const keyItem = keys.data?.items.find((k) => k.hash === b.keyHash);
                return (
                  <li class="card" key={b.id} style={{ listStyle: 'none' }}>
                    <h3 style={{ margin: 0 }}>{b.name ?? (b.scope === 'ACCOUNT' ? 'Whole account' : 'Key budget')}</h3>
                    <p class="muted" style={{ margin: '4px 0' }}>
                      {b.scope === 'ACCOUNT' ? 'All keys' : `Key ${keyItem ? keyName(keyItem) : b.keyHash?.slice(0, 12)}`} · alert at {b.alertThreshold}%
                    </p>
                    <p style={{ margin: '4px 0' }}>
                      {money(b.spend.monthToDate)} of {money(b.monthlyLimit)} ({percent(b.percentUsed)}){' '}
                      <span class={`badge ${b.status}`}>{STATUS_TEXT[b.status]}</span>
                    </p>
                    <p class="muted" style={{ margin: '4px 0' }}>
                      Forecast for the month end: {money(b.forecast.monthEnd)} ({percent(b.forecast.percentOfLimit)} of the limit)
                    </p>
                    <div
                      class={`bar ${b.status}`}
                      role="progressbar"
                      aria-label={`Spend of ${b.name ?? 'budget'}`}
                      aria-valuemin={0}
                      aria-valuemax={100}
                      aria-valuenow={Math.min(100, Math.round(b.percentUsed))}
                    >
                      <span style={{ width: `${Math.min(100, b.percentUsed)}%` }} />
                    </div>
                    {canEdit && (
                      <p class="actions">
                        <button
                          type="button"
                          class="secondary"
                          disabled={remove.busy}
                          onClick={() => {
                            if (!confirm(`Delete the budget ${b.name ?? ''}?`)) return;
                            void remove.run(() => ok(api.DELETE('/budgets/{id}', { params: { path: { id: b.id } } }))).then(budgets.reload);
                          }}
                        >
                          Delete budget {b.name ?? ''}
                        </button>
                      </p>
                    )}
                  </li>
                );
              })}
            </ul>
          )
        }
      </Show>
      {canEdit && (
        <>
          <h2>New budget</h2>
          <Form
            label="New budget"
            error={create.error}
            onSubmit={() =>
              void create
                .run(() =>
                  ok(
                    api.POST('/budgets', {
                      body: {
                        name: form.name.trim() || null,
                        monthlyLimit: Number(form.monthlyLimit),
                        alertThreshold: Number(form.alertThreshold),
                        scope: form.scope,
                        ...(form.scope === 'KEY' ? { keyHash: form.keyHash } : {}),
                      },
                    }),
                  ),
                )
                .then((done) => {
                  if (done) {
                    setForm({ ...form, name: '', monthlyLimit: '' });
                    budgets.reload();
                  }
                })
            }
          >
            <Field label="Name" value={form.name} error={create.fieldError('name')} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
            <Field
              label="Monthly limit (US dollars)"
              inputMode="decimal"
              required
              value={form.monthlyLimit}
              error={create.fieldError('monthlyLimit')}
              onInput={(e) => setForm({ ...form, monthlyLimit: e.currentTarget.value })}
            />
            <Field
              label="Alert at (% of the limit)"
              inputMode="decimal"
              required
              value={form.alertThreshold}
              error={create.fieldError('alertThreshold')}
              onInput={(e) => setForm({ ...form, alertThreshold: e.currentTarget.value })}
            />
            <Select
              label="Applies to"
              value={form.scope}
              options={[
                ['ACCOUNT', 'The whole account'],
                ['KEY', 'One key'],
              ]}
              onChange={(e) => setForm({ ...form, scope: e.currentTarget.value as 'ACCOUNT' | 'KEY' })}
            />
            {form.scope === 'KEY' && (
              <Select
                label="Key"
                value={form.keyHash}
                options={[['', 'Choose a key'], ...(keys.data?.items ?? []).map((k): [string, string] => [k.hash, keyName(k)])]}
                onChange={(e) => setForm({ ...form, keyHash: e.currentTarget.value })}
              />
            )}
            <button type="submit" disabled={create.busy}>
              Create budget
            </button>
          </Form>
        </>
      )}
    </Screen>
  );
}
