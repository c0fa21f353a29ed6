import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Focus back to the control that opened an editor once it closes (Escape, Cancel, Save), instead of dropping to the
 * top of the page: put `ref` on the opener and call `returnFocus()` when closing.
 */
export function useReturnFocus<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [pending, setPending] = useState(false);
  useEffect(() => {
    if (pending && ref.current) {
      ref.current.focus();
      setPending(false);
    }
  });
  return { ref, returnFocus: () => setPending(true) };
}

/** An in-place editor's open state; closing it returns focus to the control that opened it (`opener` on that control). */
export function useEditor() {
  const [editing, setEditing] = useState(false);
  const { ref, returnFocus } = useReturnFocus<HTMLButtonElement>();
  return {
    editing,
    opener: ref,
    open: () => setEditing(true),
    close: () => {
      setEditing(false);
      returnFocus();
    },
  };
}
