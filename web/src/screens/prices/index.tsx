import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, useSubmit } from '../../ui/form.tsx';
import { unitPrice, utcDay, when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';

type Price = Schemas['Price'];
type Draft = { provider: string; model: string; input: string; cachedInput: string; cacheWrite: string; cacheWrite1h: string; output: string };

const BLANK: Draft = { provider: '', model: '', input: '', cachedInput: '', cacheWrite: '', cacheWrite1h: '', output: '' };
/** The optional prices: an empty box is the input price. */
const OPTIONAL = ['cachedInput', 'cacheWrite', 'cacheWrite1h'] as const;
const name = (p: Pick<Price, 'provider' | 'model'>) => `${p.provider}/${p.model}`;

export function Prices() {
  const isAdmin = useCan('admin');
  const prices = useLoad(() => ok(api.GET('/prices')), []);
  const [filter, setFilter] = useState('');
  // The form's contents; a new `edit` number remounts it (a row's "Edit" fills it and moves focus there).
  const [draft, setDraft] = useState<{ edit: number; values: Draft; focus: boolean }>({ edit: 0, values: BLANK, focus: false });
  const [saved, setSaved] = useState<string>();
  const remove = useSubmit();
  document.title = 'Prices · Burnrate';

  const edit = (p: Price) => {
    setSaved(undefined);
    setDraft({
      edit: draft.edit + 1,
      focus: true,
      values: {
        provider: p.provider,
        model: p.model,
        input: String(p.input),
        cachedInput: String(p.cachedInput),
        cacheWrite: String(p.cacheWrite),
        cacheWrite1h: String(p.cacheWrite1h),
        output: String(p.output),
      },
    });
  };
  const del = (p: Price) => {
    if (!confirm(`Delete your own price of ${name(p)}? Events ingested from then on use the built-in price, or none if there is none.`)) return;
    setSaved(undefined);
    void remove.run(() => ok(api.DELETE('/prices/{provider}/{model}', { params: { path: { provider: p.provider, model: p.model } } }))).then(prices.reload);
  };

  return (
    <Screen title="Prices">
      <p class="muted">
        US dollars per million tokens. Events without their own <code>costUsd</code> are priced with these when they are ingested: built-in prices from the
        providers' public pages, or an own price (a negotiated rate, a fine-tune) set by an admin, from then on. Nothing already counted is repriced.
        Cached input is what reading the provider's prompt cache costs; cache writes (kept 5 minutes or 1 hour) are what writing it costs, where the
        provider charges for that (else the input price). Batch usage a connection imports costs half.
      </p>
      {isAdmin && (
        <PriceForm
          key={draft.edit}
          initial={draft.values}
          focus={draft.focus}
          onSaved={(p) => {
            setSaved(
              `Saved: ${name(p)} at ${unitPrice(p.input)} input, ${unitPrice(p.cachedInput)} cached input, ${unitPrice(p.cacheWrite)} / ${unitPrice(p.cacheWrite1h)} ` +
                `cache writes (5 minutes / 1 hour), ${unitPrice(p.output)} output per million tokens. Events ingested from now on use it.`,
            );
            setDraft({ edit: draft.edit + 1, values: BLANK, focus: false });
            prices.reload();
          }}
        />
      )}
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
      <h2>All prices</h2>
      <Field label="Filter by provider or model" type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <ErrorBox error={remove.error} />
      <Show state={prices}>
        {({ items }) => {
          if (items.length === 0) return <Empty>No prices: events without costUsd are counted as unpriced.</Empty>;
          const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
          const shown = items.filter((p) => words.every((w) => name(p).includes(w)));
          if (shown.length === 0) return <Empty>No price matches “{filter.trim()}”.</Empty>;
          return (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Prices">
              <table class="nowrap">
                <caption class="muted">
                  {shown.length === items.length ? `${items.length} prices` : `${shown.length} of ${items.length} prices`} ($ per million tokens)
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Model</th>
                    <th scope="col" class="num">Input</th>
                    <th scope="col" class="num">Cached input</th>
                    <th scope="col" class="num">Cache write 5 min</th>
                    <th scope="col" class="num">Cache write 1 h</th>
                    <th scope="col" class="num">Output</th>
                    <th scope="col">Source</th>
                    <th scope="col">Checked or set</th>
                    {isAdmin && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {shown.map((p) => (
                    <tr key={name(p)}>
                      <td>{p.provider}</td>
                      <td>{p.model}</td>
                      <td class="num">{unitPrice(p.input)}</td>
                      <td class="num">{unitPrice(p.cachedInput)}</td>
                      <td class="num">{unitPrice(p.cacheWrite)}</td>
                      <td class="num">{unitPrice(p.cacheWrite1h)}</td>
                      <td class="num">{unitPrice(p.output)}</td>
                      <td>
                        {p.sourceUrl === null ? (
                          <span class="badge own">Own</span>
                        ) : (
                          <>
                            <span class="badge builtin">Built-in</span>{' '}
                            <a href={p.sourceUrl} target="_blank" rel="noopener noreferrer" aria-label={`Where the built-in price of ${name(p)} comes from: ${p.sourceUrl}`}>
                              {new URL(p.sourceUrl).hostname}
                            </a>
                          </>
                        )}
                      </td>
                      <td>{p.checkedAt === null ? when(p.updatedAt) : `checked ${utcDay(p.checkedAt)}`}</td>
                      {isAdmin && (
                        <td>
                          <span class="actions">
                            <button type="button" class="link" aria-label={`${p.source === 'account' ? 'Edit the own price' : 'Set own price'} of ${name(p)}`} onClick={() => edit(p)}>
                              {p.source === 'account' ? 'Edit' : 'Set own price'}
                            </button>
                            {p.source === 'account' && (
                              <button type="button" class="link" aria-label={`Delete the own price of ${name(p)}`} disabled={remove.busy} onClick={() => del(p)}>
                                Delete
                              </button>
                            )}
                          </span>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        }}
      </Show>
    </Screen>
  );
}

/** A price as the API takes it: an empty or non-numeric box goes as null, so the API's field error says what is wanted. */
function amount(text: string): number {
  return text.trim() === '' ? Number.NaN : Number(text.trim());
}

function PriceForm({ initial, focus, onSaved }: { initial: Draft; focus: boolean; onSaved: (price: Price) => void }) {
  const [form, setForm] = useState(initial);
  const [missing, setMissing] = useState<Partial<Record<'provider' | 'model', string>>>({});
  const submit = useSubmit();
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focus) box.current?.querySelector<HTMLInputElement>('input[name="input"]')?.focus();
  }, [focus]);
  const set = (field: keyof Draft) => (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [field]: e.currentTarget.value });

  const save = () => {
    // Provider and model are parts of the URL: an empty one can't reach the API's validation.
    const need = {
      ...(form.provider.trim() ? {} : { provider: 'Enter the provider, as your events name it.' }),
      ...(form.model.trim() ? {} : { model: 'Enter the model, as your events name it.' }),
    };
    setMissing(need);
    if (need.provider || need.model) return;
    const optional = Object.fromEntries(OPTIONAL.filter((f) => form[f].trim()).map((f) => [f, amount(form[f])]));
    const body = { input: amount(form.input), output: amount(form.output), ...optional };
    void submit.run(async () => onSaved(await ok(api.PUT('/prices/{provider}/{model}', { params: { path: { provider: form.provider.trim(), model: form.model.trim() } }, body }))));
  };
  const fieldError = (field: string) => submit.fieldError(field);
  // Errors the fields show themselves are not repeated under the form.
  const shownByFields = ['path.provider', 'path.model', 'input', ...OPTIONAL, 'output'].some((f) => fieldError(f));

  return (
    <div class="card" ref={box}>
      <h2 style={{ marginTop: 0 }}>Set an own price</h2>
      <Form label="Set an own price" error={shownByFields ? undefined : submit.error} onSubmit={save}>
        <div class="field-row">
          <Field label="Provider" name="provider" value={form.provider} autoComplete="off" error={missing.provider ?? fieldError('path.provider')} onInput={set('provider')} />
          <Field label="Model" name="model" value={form.model} autoComplete="off" error={missing.model ?? fieldError('path.model')} onInput={set('model')} />
        </div>
        <fieldset class="field-row">
          <legend>US dollars per million tokens</legend>
          <Field label="Input" name="input" inputMode="decimal" value={form.input} error={fieldError('input')} onInput={set('input')} />
          <Field label="Cached input" name="cachedInput" inputMode="decimal" hint="Empty: the input price." value={form.cachedInput} error={fieldError('cachedInput')} onInput={set('cachedInput')} />
          <Field label="Cache write 5 min" name="cacheWrite" inputMode="decimal" hint="Empty: the input price." value={form.cacheWrite} error={fieldError('cacheWrite')} onInput={set('cacheWrite')} />
          <Field label="Cache write 1 h" name="cacheWrite1h" inputMode="decimal" hint="Empty: the input price." value={form.cacheWrite1h} error={fieldError('cacheWrite1h')} onInput={set('cacheWrite1h')} />
          <Field label="Output" name="output" inputMode="decimal" value={form.output} error={fieldError('output')} onInput={set('output')} />
        </fieldset>
        <p class="actions">
          <button type="submit" disabled={submit.busy}>
            Save price
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setForm(BLANK);
              setMissing({});
              submit.clear();
            }}
          >
            Clear the form
          </button>
        </p>
      </Form>
    </div>
  );
}
