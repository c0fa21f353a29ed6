/**
 * Choosing one key among up to 1,000: a search box (part of the label, the provider, the hint or the start of the
 * hash, answered by the server's `GET /keys?q=`), then a short list of matches to pick from with the keyboard or a
 * tap. The chosen key is named by its label wherever it is shown.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client.ts';
import { Field } from './form.tsx';
import { keyName } from './key-name.ts';
import { providerWords } from './format.ts';

type Key = Schemas['Key'];
const SHOWN = 8;

let nextId = 0;

/** The keys matching `q`, most spend this month first (the server searches the whole account). */
export async function searchKeys(q: string, limit = SHOWN): Promise<{ items: Key[]; total: number }> {
  const query = q.trim() ? { q: q.trim().slice(0, 100), limit } : { limit };
  const page = await ok(api.GET('/keys', { params: { query } }));
  return { items: page.items, total: page.total };
}

export function KeyPicker({
  label,
  value,
  onChange,
  error,
  allowNone,
  chosenName,
}: {
  label: string;
  value: string;
  onChange: (hash: string) => void;
  error?: string | undefined;
  /** The text of the "no key" choice (e.g. "All keys"), when choosing none is allowed. */
  allowNone?: string;
  /** The name of the key `value` names, when the caller knows it (editing a budget of a key not among the matches). */
  chosenName?: string | undefined;
}) {
  const [id] = useState(() => `kp${++nextId}`);
  const [q, setQ] = useState('');
  const [found, setFound] = useState<{ items: Key[]; total: number } | undefined>();
  const [chosen, setChosen] = useState<Key | undefined>();
  const [failed, setFailed] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      searchKeys(q).then(
        (result) => live && (setFound(result), setFailed(undefined)),
        (e: unknown) => live && setFailed(e instanceof Error ? e.message : String(e)),
      );
    }, q ? 150 : 0);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q]);
  const items = found?.items ?? [];
  const current = chosen?.hash === value ? chosen : items.find((k) => k.hash === value);
  const choose = (key: Key | undefined) => {
    setChosen(key);
    onChange(key?.hash ?? '');
  };
  return (
    <fieldset class="key-picker">
      <legend>{label}</legend>
      <p class="muted" id={`${id}-chosen`} aria-live="polite">
        {value ? `Chosen: ${current ? `${keyName(current)} (${providerWords(current.provider)})` : (chosenName ?? value.slice(0, 12))}` : allowNone ? `Chosen: ${allowNone}` : 'No key chosen yet.'}
      </p>
      <Field
        label={`Search ${label.toLowerCase()}s`}
        type="search"
        hint="Part of the label, the provider or the hint, or the start of the hash."
        value={q}
        error={error ?? failed}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      <div role="radiogroup" aria-label={`Matching keys${found ? `: ${found.total}` : ''}`} class="key-options">
        {allowNone && (
          <label class="check">
            <input type="radio" name={id} checked={!value} onChange={() => choose(undefined)} /> {allowNone}
          </label>
        )}
        {items.map((k) => (
          <label class="check" key={k.hash}>
            <input type="radio" name={id} checked={k.hash === value} onChange={() => choose(k)} /> {keyName(k)}{' '}
            <span class="muted">
              {providerWords(k.provider)}
              {k.hint ? ` · ${k.hint}` : ''} · {k.hash.slice(0, 8)}
            </span>
          </label>
        ))}
        {found && found.total > items.length && (
          <small class="muted">
            {items.length} of {found.total} keys shown: type more to narrow.
          </small>
        )}
        {found && found.total === 0 && <small class="muted">No key matches “{q}”.</small>}
      </div>
    </fieldset>
  );
}
