import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, Select, useSubmit } from '../../ui/form.tsx';
import { money, when } from '../../ui/format.ts';
import { keyName } from '../../ui/key-name.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';

type Rule = Schemas['Rule'];
type RuleType = Rule['type'];
type Channel = Rule['channels'][number];

const TYPES: [RuleType, string][] = [
  ['cost_threshold', 'Spend passes an amount'],
  ['spend_spike', 'Spend spikes'],
  ['new_key', 'A new key appears'],
];

function describe(rule: Rule): string {
  switch (rule.type) {
    case 'cost_threshold':
      return `When ${rule.config.period} spend passes ${money(rule.config.threshold)}`;
    case 'spend_spike':
      return `When a day's spend is ${rule.config.multiplier}× the usual (at least ${money(rule.config.minSpend)})`;
    case 'new_key':
      return 'When a new key appears';
  }
}

export function AlertRules() {
  const canEdit = useCan('member');
  const rules = useLoad(() => ok(api.GET('/alert-rules')), []);
  const keys = useLoad(() => ok(api.GET('/keys', { params: { query: { limit: 100 } } })), []);
  const [type, setType] = useState<RuleType>('cost_threshold');
  const [form, setForm] = useState({ name: '', threshold: '', period: 'daily', keyHash: '', multiplier: '3', minSpend: '10', webhookUrl: '', slackWebhookUrl: '' });
  const [channels, setChannels] = useState<Channel[]>(['email']);
  const create = useSubmit();
  const change = useSubmit();
  document.title = 'Alert rules · Burnrate';

  const body = (): Schemas['CreateRuleRequest'] => {
    const webhook = {
      ...(channels.includes('webhook') ? { webhookUrl: form.webhookUrl } : {}),
      ...(channels.includes('slack') ? { slackWebhookUrl: form.slackWebhookUrl } : {}),
    };
    const common = { name: form.name, channels };
    if (type === 'cost_threshold') {
      return {
        ...common,
        type,
        config: { threshold: Number(form.threshold), period: form.period as 'daily', ...(form.keyHash ? { keyHash: form.keyHash } : {}), ...webhook },
      };
    }
    if (type === 'spend_spike') return { ...common, type, config: { multiplier: Number(form.multiplier), minSpend: Number(form.minSpend), ...webhook } };
    return { ...common, type, config: webhook };
  };
  const set = (name: keyof typeof form) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) => setForm({ ...form, [name]: e.currentTarget.value });
  const toggle = (channel: Channel) => setChannels(channels.includes(channel) ? channels.filter((c) => c !== channel) : [...channels, channel]);

  return (
    <Screen title="Alert rules">
      <ErrorBox error={change.error} />
      <Show state={rules}>
        {({ items }) =>
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
                    <tr key={r.id}>
                      <td>{r.name}</td>
                      <td>{describe(r)}</td>
                      <td>{r.channels.join(', ')}</td>
                      <td>{when(r.lastTriggeredAt)}</td>
                      <td>{r.isActive ? 'Active' : 'Paused'}</td>
                      {canEdit && (
                        <td class="actions">
                          <button
                            type="button"
                            class="secondary"
                            onClick={() =>
                              void change.run(() => ok(api.PATCH('/alert-rules/{id}', { params: { path: { id: r.id } }, body: { isActive: !r.isActive } }))).then(rules.reload)
                            }
                          >
                            {r.isActive ? 'Pause' : 'Resume'} {r.name}
                          </button>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() => {
                              if (confirm(`Delete the rule ${r.name}?`)) {
                                void change.run(() => ok(api.DELETE('/alert-rules/{id}', { params: { path: { id: r.id } } }))).then(rules.reload);
                              }
                            }}
                          >
                            Delete {r.name}
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
      {canEdit && (
        <>
          <h2>New rule</h2>
          <Form
            label="New rule"
            error={create.error}
            onSubmit={() =>
              void create.run(() => ok(api.POST('/alert-rules', { body: body() }))).then((done) => {
                if (done) {
                  setForm({ ...form, name: '' });
                  rules.reload();
                }
              })
            }
          >
            <Select label="Type" value={type} options={TYPES} onChange={(e) => setType(e.currentTarget.value as RuleType)} />
            <Field label="Name" required value={form.name} error={create.fieldError('name')} onInput={set('name')} />
            {type === 'cost_threshold' && (
              <>
                <Field label="Amount (US dollars)" inputMode="decimal" required value={form.threshold} error={create.fieldError('config.threshold')} onInput={set('threshold')} />
                <Select
                  label="Period"
                  value={form.period}
                  options={[
                    ['daily', 'Day'],
                    ['weekly', 'Week'],
                    ['monthly', 'Month'],
                  ]}
                  onChange={set('period')}
                />
                <Select
                  label="Key"
                  value={form.keyHash}
                  options={[['', 'All keys'], ...(keys.data?.items ?? []).map((k): [string, string] => [k.hash, keyName(k)])]}
                  onChange={set('keyHash')}
                />
              </>
            )}
            {type === 'spend_spike' && (
              <>
                <Field label="Multiplier of the usual daily spend" inputMode="decimal" required value={form.multiplier} error={create.fieldError('config.multiplier')} onInput={set('multiplier')} />
                <Field label="Least spend of the day (US dollars)" inputMode="decimal" required value={form.minSpend} error={create.fieldError('config.minSpend')} onInput={set('minSpend')} />
              </>
            )}
            <fieldset>
              <legend>Channels</legend>
              {(['email', 'webhook', 'slack'] as const).map((c) => (
                <label key={c} style={{ marginRight: '16px' }}>
                  <input type="checkbox" checked={channels.includes(c)} onChange={() => toggle(c)} /> {c === 'email' ? 'E-mail' : c === 'webhook' ? 'Webhook' : 'Slack'}
                </label>
              ))}
            </fieldset>
            {channels.includes('webhook') && (
              <Field label="Webhook URL" type="url" required value={form.webhookUrl} error={create.fieldError('config.webhookUrl')} onInput={set('webhookUrl')} />
            )}
            {channels.includes('slack') && (
              <Field
                label="Slack incoming-webhook URL"
                type="url"
                required
                hint="https://hooks.slack.com/…"
                value={form.slackWebhookUrl}
                error={create.fieldError('config.slackWebhookUrl')}
                onInput={set('slackWebhookUrl')}
              />
            )}
            <button type="submit" disabled={create.busy}>
              Create rule
            </button>
          </Form>
        </>
      )}
    </Screen>
  );
}
