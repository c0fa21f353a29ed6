/**
 * A request's deadline as an AbortSignal: aborted `ms` after it is made, or when `stop` aborts. Its timer is held by
 * the timer list itself (never only weakly, as a timeout signal inside `AbortSignal.any` is on Node 20, where it can
 * be garbage-collected before it fires and leave a request to a silent server open for ever), and unref'd, so it
 * never keeps the process alive on its own. `clear()` once the request and its body are done.
 */
export function deadline(ms: number, stop?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const onStop = () => controller.abort(stop?.reason);
  if (stop?.aborted) controller.abort(stop.reason);
  else stop?.addEventListener('abort', onStop, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  timer.unref?.();
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    },
  };
}
