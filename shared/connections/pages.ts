/**
 * Bounds on what Burnrate reads from a provider, one helper for all three providers (openai.ts, anthropic.ts,
 * openrouter.ts, organization.ts): a provider that loops, swells or repeats itself ends the read with an error that
 * says which bound it met, instead of filling a function's memory or time.
 * - At most MAX_PAGES pages and MAX_LIST_ITEMS items per list (a report's items are its rows).
 * - A page cursor or offset that repeats (the provider hands back one it gave before), or a page whose every item
 *   was listed already (a provider that ignores the offset), is an error.
 * - A response body over MAX_BODY_BYTES is refused while it streams (http.ts `readBody`): never read whole first.
 * The bounds are far above what a real organization reaches (OpenRouter's 100 keys a page: 100,000 keys in 1,000
 * pages; OpenAI's and Anthropic's reports: 31 days a page).
 */
import { MAX_BODY_BYTES, ProviderLimitExceeded, type ReadLimit } from '#shared/connections/http.ts';

export { MAX_BODY_BYTES, ProviderLimitExceeded, type ReadLimit };

/** Most pages read of one list or report. */
export const MAX_PAGES = 1000;
/** Most items of one list (keys, projects, workspaces) or rows of one report. */
export const MAX_LIST_ITEMS = 100_000;

/** One page of a list: its items and the cursor (or offset) of the next page; none at the end. */
export interface ListPage<T> {
  items: readonly T[];
  next?: string | undefined;
}

export interface ReadPagesOptions<T> {
  /** An item's id: an item listed twice is kept once, and a page of items all listed before is the provider looping. */
  idOf?: (item: T) => string | undefined;
  /** How many items an item counts for (a report's bucket: its rows). @default 1 */
  weight?: (item: T) => number;
  maxPages?: number;
  maxItems?: number;
}

/**
 * Every item of a paged list or report: `read(cursor)` reads one page (`undefined`: the first). `what` names the
 * list in errors (a path; never a secret). Throws ProviderLimitExceeded past a bound or on a repeat.
 */
export async function readPages<T>(what: string, read: (cursor: string | undefined) => Promise<ListPage<T>>, options: ReadPagesOptions<T> = {}): Promise<T[]> {
  const maxPages = options.maxPages ?? MAX_PAGES;
  const maxItems = options.maxItems ?? MAX_LIST_ITEMS;
  const items: T[] = [];
  const cursors = new Set<string>();
  const ids = new Set<string>();
  let weight = 0;
  let cursor: string | undefined;
  for (let pages = 0; ; ) {
    if (pages >= maxPages) {
      throw new ProviderLimitExceeded('pages', `The provider's ${what} went on past ${maxPages.toLocaleString('en-US')} pages, the most Burnrate reads of one list.`);
    }
    const page = await read(cursor);
    pages += 1;
    let fresh = 0;
    for (const item of page.items) {
      const id = options.idOf?.(item);
      if (id !== undefined) {
        if (ids.has(id)) continue;
        ids.add(id);
      }
      fresh += 1;
      weight += options.weight?.(item) ?? 1;
      if (weight > maxItems) {
        throw new ProviderLimitExceeded('items', `The provider's ${what} has more than ${maxItems.toLocaleString('en-US')} items, the most Burnrate reads of one list.`);
      }
      items.push(item);
    }
    if (page.next === undefined) return items;
    if (options.idOf && page.items.length > 0 && fresh === 0) {
      throw new ProviderLimitExceeded('repeat', `The provider answered page ${pages} of ${what} with items it had listed already: it does not move on to the next page (its offset or cursor is ignored).`);
    }
    if (page.next === cursor || cursors.has(page.next)) {
      throw new ProviderLimitExceeded('repeat', `The provider gave a page cursor of ${what} it had given before (page ${pages}): the list would never end.`);
    }
    cursors.add(page.next);
    cursor = page.next;
  }
}

/** Provider requests in flight at once when one list fans out into many (a list per project, activity per key). */
export const FAN_OUT = 8;

/** Runs `work` over `items` (with each item's index), at most `n` at a time; the first error ends it. */
export async function inPool<T>(items: readonly T[], n: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (!failed && next < items.length) {
        const i = next++;
        try {
          await work(items[i]!, i);
        } catch (error) {
          failed = true; // the other workers start nothing more
          throw error;
        }
      }
    }),
  );
}

/** A running count across the lists of one fan-out (the keys of every project): past `max`, the read stops. */
export function itemBudget(what: string, max = MAX_LIST_ITEMS): (n: number) => void {
  let total = 0;
  return (n) => {
    total += n;
    if (total > max) throw new ProviderLimitExceeded('items', `The provider's ${what} have more than ${max.toLocaleString('en-US')} items together, the most Burnrate reads of one list.`);
  };
}
