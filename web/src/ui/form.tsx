import type { ComponentChildren, JSX } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import { inUserWords, summarize } from './field-errors.ts';
import { ErrorBox } from './states.tsx';

let nextId = 0;

type InputProps = JSX.IntrinsicElements['input'] & { label: string; error?: string | undefined; hint?: string };

/** An input with its visible label, a hint and the field's error from the problem's `errors[]`. */
export function Field({ label, error, hint, ...input }: InputProps) {
  const [id] = useState(() => `f${++nextId}`);
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={describedBy} {...input} />
      {hint && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
      {error && (
        <small id={`${id}-err`} class="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

/** The register password rule in words, beside every field that sets a new password (the API's 400 says the same). */
export const PASSWORD_RULE = 'At least 8 characters, with an upper-case letter, a lower-case letter and a digit.';

/** A field that sets a new password: masked, the browser's password manager offers one, the rule shown under it. */
type NewPasswordProps = Pick<InputProps, 'label' | 'error' | 'required' | 'value' | 'onInput'>;

export function NewPasswordField(props: NewPasswordProps) {
  return <Field type="password" autocomplete="new-password" hint={PASSWORD_RULE} {...props} />;
}

type SelectProps = JSX.IntrinsicElements['select'] & { label: string; options: readonly (readonly [string, string])[] };

export function Select({ label, options, ...select }: SelectProps) {
  const [id] = useState(() => `f${++nextId}`);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} {...select}>
        {options.map(([value, text]) => (
          <option value={value} key={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Form submit state: `run(fn)` shows busy, then the problem's detail on failure. `fieldError(path, label)` gives a
 * field its error in the user's words (the label, not `monthlyLimit`) and records that the form shows that field;
 * `error` is then the form's own summary, counting each shown field once and naming it by its label.
 */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Error | undefined>();
  const labels = useRef(new Map<string, string>()).current;
  const errors = failure instanceof ApiError ? (failure.problem.errors ?? []) : [];
  const error = failure instanceof ApiError && errors.length > 0 ? new Error(summarize(errors, labels, failure.message)) : failure;
  return {
    busy,
    error,
    fieldError: (path: string, label?: string) => {
      if (label) labels.set(path, label);
      const message = failure instanceof ApiError ? failure.field(path) : undefined;
      return message === undefined ? undefined : inUserWords(message, path, label);
    },
    async run(fn: () => Promise<unknown>): Promise<boolean> {
      setBusy(true);
      setFailure(undefined);
      try {
        await fn();
        return true;
      } catch (e) {
        setFailure(e instanceof Error ? e : new Error(String(e)));
        return false;
      } finally {
        setBusy(false);
      }
    },
    clear: () => setFailure(undefined),
  };
}

export function Form({
  onSubmit,
  children,
  error,
  label,
}: {
  onSubmit: () => void;
  children: ComponentChildren;
  error?: Error | undefined;
  label?: string;
}) {
  return (
    <form
      class="form"
      aria-label={label}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      {children}
      <ErrorBox error={error} />
    </form>
  );
}

/** A form's submit button, and Cancel when the form edits something in place. */
export function FormActions({ busy, submitText, onCancel }: { busy: boolean; submitText: string; onCancel?: (() => void) | undefined }) {
  return (
    <div class="actions">
      <button type="submit" disabled={busy}>
        {submitText}
      </button>
      {onCancel && (
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      )}
    </div>
  );
}
