/** The budget form, for a new budget (POST) and for editing one in place (PATCH): the same fields, the same words. */
import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, FormActions, Select, useSubmit } from '../../ui/form.tsx';
import { KeyPicker } from '../../ui/key-picker.tsx';

type Budget = Schemas['Budget'];

export function BudgetForm({ budget, keyLabel, onDone, onCancel }: { budget?: Budget; keyLabel?: string | undefined; onDone: () => void; onCancel?: () => void }) {
  const [form, setForm] = useState({
    name: budget?.name ?? '',
    monthlyLimit: budget ? String(budget.monthlyLimit) : '',
    alertThreshold: String(budget?.alertThreshold ?? 80),
    scope: budget?.scope ?? ('ACCOUNT' as 'ACCOUNT' | 'KEY'),
    keyHash: budget?.keyHash ?? '',
  });
  const submit = useSubmit();
  const title = budget ? `Edit budget ${budget.name ?? ''}`.trim() : 'New budget';
  const body = {
    name: form.name.trim() || null,
    monthlyLimit: Number(form.monthlyLimit),
    alertThreshold: Number(form.alertThreshold),
    scope: form.scope,
    ...(form.scope === 'KEY' ? { keyHash: form.keyHash } : {}),
  };
  return (
    <Form
      label={title}
      error={submit.error}
      onSubmit={() =>
        void submit
          .run(() =>
            budget
              ? ok(api.PATCH('/budgets/{id}', { params: { path: { id: budget.id } }, body: { ...body, ...(form.scope === 'ACCOUNT' ? { keyHash: null } : {}) } }))
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
        ]}
        onChange={(e) => setForm({ ...form, scope: e.currentTarget.value as 'ACCOUNT' | 'KEY' })}
      />
      {form.scope === 'KEY' && (
        <KeyPicker label="Key" value={form.keyHash} chosenName={form.keyHash === budget?.keyHash ? keyLabel : undefined} error={submit.fieldError('keyHash', 'Key')} onChange={(keyHash) => setForm({ ...form, keyHash })} />
      )}
      <FormActions busy={submit.busy} submitText={budget ? 'Save budget' : 'Create budget'} onCancel={onCancel} />
    </Form>
  );
}
