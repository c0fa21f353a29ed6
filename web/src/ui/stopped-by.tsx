/**
 * What stops a key now (`stoppedBy` of GET /keys and GET /keys/{hash}), in words where people look: the holders (a
 * budget, a spend-anomaly rule) linked to where they are released, the lever, since when. No call of its own: the
 * Keys list shows it for every row of a page from the page's own answer.
 */
import type { Schemas } from '../api/client.ts';
import { Link } from '../router.tsx';
import { when } from './format.ts';
import { leverWords } from './lever-words.ts';

export { leverWords };

export type Stop = Schemas['Key']['stoppedBy'][number];

/** The holder as a link: the budget (its card, where it is released) or the rule's incident of this key. */
export function HolderLink({ stop, keyHash }: { stop: Pick<Stop, 'kind' | 'id' | 'name'>; keyHash: string }) {
  if (stop.kind === 'anomaly') {
    return <Link href={`/alerts?status=all&type=spend_anomaly&keyHash=${keyHash}`}>{stop.name ? `spend-anomaly rule “${stop.name}”` : 'a spend-anomaly rule'}</Link>;
  }
  return <Link href={`/budgets?budget=${stop.id}`}>{stop.name ? `budget “${stop.name}”` : 'a budget'}</Link>;
}

/** One line for a row of the Keys list: a badge, then each holder with its lever and since when. */
export function StoppedLine({ stops, keyHash }: { stops: Stop[]; keyHash: string }) {
  if (stops.length === 0) return null;
  return (
    <p class="stopped-line" data-testid="stopped-by">
      <span class="badge exceeded">Stopped</span>{' '}
      {stops.map((s, i) => (
        <span key={`${s.kind}:${s.id}:${s.lever}`}>
          {i > 0 ? '; ' : ''}by <HolderLink stop={s} keyHash={keyHash} /> <span class="muted">({leverWords(s.lever)}, since {when(s.since)})</span>
        </span>
      ))}
    </p>
  );
}
