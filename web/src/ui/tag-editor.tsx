/**
 * Tags as a person edits them: chips to read (a key's inherited ones marked "from project"), and an editor of one
 * `name: value` per line (members and admins). The API checks every rule (a 400 names the tag, shown here).
 */
import { useState } from 'preact/hooks';
import { useSubmit } from './form.tsx';
import { ErrorBox } from './states.tsx';

export type Tags = Record<string, string>;

/** `team: search` lines → tags; a line without `:` is an error the API words (an empty value). */
export function parseTags(text: string): Tags {
  const out: Tags = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf(':');
    const name = (at < 0 ? line : line.slice(0, at)).trim();
    out[name] = at < 0 ? '' : line.slice(at + 1).trim();
  }
  return out;
}

export const tagsText = (tags: Tags) =>
  Object.entries(tags)
    .map(([n, v]) => `${n}: ${v}`)
    .join('\n');

/** The tags as chips; `inherited`: names that come from the project (shown muted). */
export function TagChips({ tags, inherited = new Set<string>() }: { tags: Tags; inherited?: ReadonlySet<string> }) {
  const entries = Object.entries(tags);
  if (entries.length === 0) return <span class="muted">no tags</span>;
  return (
    <span class="tags">
      {entries.map(([name, value]) => (
        <span key={name} class={`badge${inherited.has(name) ? ' muted' : ''}`} title={inherited.has(name) ? 'from its project' : undefined}>
          {name}: {value}
          {inherited.has(name) ? ' (project)' : ''}
        </span>
      ))}
    </span>
  );
}

/** Shows `tags` with an "Edit tags" button; saving replaces them (`save` calls the API). */
export function TagEditor({ label, tags, canEdit, save, onSaved }: { label: string; tags: Tags; canEdit: boolean; save: (tags: Tags) => Promise<unknown>; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(tagsText(tags));
  const submit = useSubmit();
  if (!editing) {
    return (
      <span class="actions">
        <TagChips tags={tags} />
        {canEdit && (
          <button
            type="button"
            class="link"
            aria-label={`Edit tags of ${label}`}
            onClick={() => {
              setText(tagsText(tags));
              setEditing(true);
            }}
          >
            Edit tags
          </button>
        )}
      </span>
    );
  }
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit.run(() => save(parseTags(text))).then((done) => {
          if (done) {
            setEditing(false);
            onSaved();
          }
        });
      }}
    >
      <div class="field">
        <label for="tags-text">Tags of {label}</label>
        <textarea id="tags-text" rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder={'team: search\ncost-center: cc-1042'} />
        <small class="muted">One per line, name: value. Names: lower case a-z 0-9 _ . - : / (up to 64); at most 20 tags.</small>
      </div>
      {submit.error && <ErrorBox error={submit.error} />}
      <div class="actions">
        <button type="submit" disabled={submit.busy}>
          Save tags
        </button>
        <button type="button" class="secondary" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
