import { useState } from 'preact/hooks';
import { useReturnFocus } from './focus.ts';
import { api, ok, type Schemas } from '../api/client.ts';
import { Field, useSubmit } from './form.tsx';
import { ErrorBox } from './states.tsx';

/** The API's longest label (shared/keys/schemas.ts). */
const LABEL_MAX = 100;
import { keyName } from './key-name.ts';

/** A key's label with an "Edit label" button (members and admins): edit in place, Enter saves, Escape cancels. */
export function LabelEditor({ item, canEdit, onSaved }: { item: Schemas['Key']; canEdit: boolean; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(item.label ?? '');
  const submit = useSubmit();
  const opener = useReturnFocus<HTMLButtonElement>();
  const close = () => {
    setEditing(false);
    submit.clear();
    opener.returnFocus();
  };
  if (!editing) {
    return (
      <span class="actions">
        <span>
          {item.label ?? (item.name ? (
            // A connection's key without a label: the provider's name of the key.
            <>
              {item.name} <span class="muted">(no label)</span>
            </>
          ) : (
            <span class="muted">no label</span>
          ))}
        </span>
        {canEdit && (
          <button type="button" class="link" ref={opener.ref} aria-label={`Edit label of ${keyName(item)}`} onClick={() => {
              setValue(item.label ?? '');
              setEditing(true);
            }}>
            Edit label
          </button>
        )}
      </span>
    );
  }
  const save = () =>
    void submit
      .run(() => ok(api.PATCH('/keys/{hash}', { params: { path: { hash: item.hash } }, body: { label: value.trim() || null } })))
      .then((done) => {
        if (done) {
          close();
          onSaved();
        }
      });
  return (
    <form
      class="form inline"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          close();
        }
      }}
    >
      {/* No maxLength: a longer label pasted in would be cut without a word; it is said instead, and the API refuses it. */}
      <Field
        label={`Label of ${keyName(item)}`}
        value={value}
        autoFocus
        hint={value.trim().length > LABEL_MAX ? `At most ${LABEL_MAX} characters: this one has ${value.trim().length}.` : undefined}
        error={submit.fieldError('label', 'Label')}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <button type="submit" disabled={submit.busy}>
        Save label
      </button>
      <button type="button" class="secondary" onClick={close}>
        Cancel
      </button>
      <ErrorBox error={submit.error && !submit.fieldError('label') ? submit.error : undefined} />
    </form>
  );
}
