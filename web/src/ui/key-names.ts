/** The names of a few keys named by hash (budgets, rules): one small read per distinct key, so each shows its label. */
import { api, ok } from '../api/client.ts';
import { keyName } from './key-name.ts';

export async function keyNames(hashes: readonly (string | null | undefined)[]): Promise<Map<string, string>> {
  const distinct = [...new Set(hashes.filter((h): h is string => Boolean(h)))];
  const today = new Date().toISOString().slice(0, 10);
  const keys = await Promise.all(
    distinct.map((hash) => ok(api.GET('/keys/{hash}', { params: { path: { hash }, query: { from: today, to: today } } })).catch(() => undefined)),
  );
  return new Map(keys.flatMap((k) => (k ? [[k.hash, keyName(k)] as const] : [])));
}
