import { useState } from 'preact/hooks';

/** A real button that copies `text`, and says so (politely, for screen readers). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<string>('');
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setDone('Copied.'),
            () => setDone('Could not copy: select the text and copy it by hand.'),
          )
        }
      >
        {label}
      </button>
      <span role="status" class="muted">
        {done}
      </span>
    </>
  );
}
