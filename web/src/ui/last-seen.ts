// The generated types directly (not through api/client.ts), so a unit test can import this without a browser.
import type { components } from '../api/schema.d.ts';
import { utcDay, when } from './format.ts';

type Key = components['schemas']['Key'];

/**
 * When a key was last seen in use, in words. A key sent in events: the moment Burnrate counted its latest event. A
 * connection's key: the UTC day of the latest usage the provider reported (its usage comes per day, so a time would
 * say more than is known; a sync's own time is not the key's). A key without any usage yet: `no usage yet`.
 */
export function lastSeenWords(k: Pick<Key, 'source' | 'lastSeenAt' | 'spend' | 'requests'>): string {
  if (k.spend.total === 0 && k.requests.total === 0) return 'no usage yet';
  return k.source === 'connection' ? utcDay(k.lastSeenAt.slice(0, 10)) : when(k.lastSeenAt);
}
