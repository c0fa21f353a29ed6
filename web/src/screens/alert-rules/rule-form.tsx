/** The alert rule form, for a new rule (POST) and for editing one in place (PATCH). */
import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, FormActions, Select, useSubmit } from '../../ui/form.tsx';
import { EmailWithheld } from '../../ui/email-withheld.tsx';
import { KeyPicker } from '../../ui/key-picker.tsx';

type Rule = Schemas['Rule'];
type RuleType = Rule['type'];
type Channel = Rule['channels'][number];

export const TYPES: [RuleType, string][] = [
  ['cost_threshold', 'Spend passes an amount'],
  ['spend_spike', 'Spend spikes'],
  ['new_key', 'A new key appears'],
  ['spend_anomaly', 'A key suddenly spends far more than usual'],
];

/** A spend-anomaly rule in words: "Stop a key that suddenly spends 10× its usual rate, at least $20 an hour". */
export function anomalyWords(c: { minUsdPerHour: number; multiplier: number; action: 'notify' | 'stop' }): string {
  const amount = Number.isInteger(c.minUsdPerHour) ? `$${c.minUsdPerHour}` : `$${c.minUsdPerHour.toFixed(2)}`;
  return `${c.action === 'stop' ? 'Stop' : 'Alert on'} a key that suddenly spends ${c.multiplier}× its usual rate, at least ${amount} an hour`;
}

function initial(rule: Rule | undefined) {
  const c = (rule?.config ?? {}) as Partial<{
    threshold: number;
    period: string;
    keyHash: string;
    multiplier: number;
    minSpend: number;
    minUsdPerHour: number;
    action: 'notify' | 'stop';
    webhookUrl: string;
    slackWebhookUrl: string;
  }>;
  const anomaly = rule?.type === 'spend_anomaly';
  return {
    name: rule?.name ?? '',
    threshold: c.threshold === undefined ? '' : String(c.threshold),
    period: c.period ?? 'daily',
    keyHash: c.keyHash ?? '',
    multiplier: String(c.multiplier ?? 3),
    minSpend: String(c.minSpend ?? 10),
    anomalyMultiplier: String(anomaly ? (c.multiplier ?? 10) : 10),
    minUsdPerHour: String(c.minUsdPerHour ?? 20),
    action: c.action ?? 'stop',
    webhookUrl: c.webhookUrl ?? '',
    slackWebhookUrl: c.slackWebhookUrl ?? '',
  };
}

export function RuleForm({ rule, keyLabel, onDone, onCancel }: { rule?: Rule; keyLabel?: string | undefined; onDone: () => void; onCancel?: () => void }) {
  const [type, setType] = useState<RuleType>(rule?.type ?? 'cost_threshold');
  const [form, setForm] = useState(() => initial(rule));
  const [channels, setChannels] = useState<Channel[]>(rule?.channels ?? ['email']);
  const submit = useSubmit();

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
    if (type === 'spend_anomaly') {
      return {
        ...common,
        type,
        config: { minUsdPerHour: Number(form.minUsdPerHour), multiplier: Number(form.anomalyMultiplier), action: form.action as 'notify' | 'stop', ...webhook },
      };
    }
    return { ...common, type, config: webhook };
  };
  const set = (name: keyof typeof form) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement }) => setForm({ ...form, [name]: e.currentTarget.value });
  const toggle = (channel: Channel) => setChannels(channels.includes(channel) ? channels.filter((c) => c !== channel) : [...channels, channel]);
  const label = rule ? `Edit rule ${rule.name}` : 'New rule';

  return (
    <Form
      label={label}
      error={submit.error}
      onSubmit={() =>
        void submit
          .run(() => (rule ? ok(api.PATCH('/alert-rules/{id}', { params: { path: { id: rule.id } }, body: body() })) : ok(api.POST('/alert-rules', { body: body() }))))
          .then((done) => {
            if (!done) return;
            if (!rule) setForm({ ...form, name: '' });
            onDone();
          })
      }
    >
      <Select label="Type" value={type} options={TYPES} onChange={(e) => setType(e.currentTarget.value as RuleType)} />
      <Field label="Name" required value={form.name} error={submit.fieldError('name', 'Name')} onInput={set('name')} />
      {type === 'cost_threshold' && (
        <>
          <Field label="Amount (US dollars)" inputMode="decimal" required value={form.threshold} error={submit.fieldError('config.threshold', 'Amount (US dollars)')} onInput={set('threshold')} />
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
          <KeyPicker label="Key" allowNone="All keys" value={form.keyHash} chosenName={keyLabel} error={submit.fieldError('config.keyHash', 'Key')} onChange={(keyHash) => setForm({ ...form, keyHash })} />
        </>
      )}
      {type === 'spend_spike' && (
        <>
          <Field label="Multiplier of the usual daily spend" inputMode="decimal" required value={form.multiplier} error={submit.fieldError('config.multiplier', 'Multiplier of the usual daily spend')} onInput={set('multiplier')} />
          <Field label="Least spend of the day (US dollars)" inputMode="decimal" required value={form.minSpend} error={submit.fieldError('config.minSpend', 'Least spend of the day (US dollars)')} onInput={set('minSpend')} />
        </>
      )}
      {type === 'spend_anomaly' && (
        <>
          <Select
            label="When a key runs away"
            value={form.action}
            options={[
              ['stop', 'Stop the key and alert'],
              ['notify', 'Alert only'],
            ]}
            onChange={set('action')}
          />
          <Field
            label="Times its usual hourly spend"
            inputMode="decimal"
            required
            hint="Usual: its average hour over the last 14 days."
            value={form.anomalyMultiplier}
            error={submit.fieldError('config.multiplier', 'Times its usual hourly spend')}
            onInput={set('anomalyMultiplier')}
          />
          <Field
            label="At least (US dollars an hour)"
            inputMode="decimal"
            required
            value={form.minUsdPerHour}
            error={submit.fieldError('config.minUsdPerHour', 'At least (US dollars an hour)')}
            onInput={set('minUsdPerHour')}
          />
          <p class="muted" data-testid="anomaly-words">
            {anomalyWords({ minUsdPerHour: Number(form.minUsdPerHour) || 0, multiplier: Number(form.anomalyMultiplier) || 0, action: form.action as 'notify' | 'stop' })}.{' '}
            {form.action === 'stop'
              ? 'Every key of the account is watched. Anthropic and OpenRouter keys are switched off at the provider and reporter keys are refused, until someone releases the key; OpenAI can\'t pause a single key, so its keys are alerted on only.'
              : 'Every key of the account is watched; nothing is stopped.'}
          </p>
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
      {channels.includes('email') && <EmailWithheld />}
      {channels.includes('webhook') && (
        <Field label="Webhook URL" type="url" required value={form.webhookUrl} error={submit.fieldError('config.webhookUrl', 'Webhook URL')} onInput={set('webhookUrl')} />
      )}
      {channels.includes('slack') && (
        <Field
          label="Slack incoming-webhook URL"
          type="url"
          required
          hint="https://hooks.slack.com/…"
          value={form.slackWebhookUrl}
          error={submit.fieldError('config.slackWebhookUrl', 'Slack incoming-webhook URL')}
          onInput={set('slackWebhookUrl')}
        />
      )}
      <FormActions busy={submit.busy} submitText={rule ? 'Save rule' : 'Create rule'} onCancel={onCancel} />
    </Form>
  );
}
