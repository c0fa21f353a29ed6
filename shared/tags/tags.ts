/**
 * Tags (docs/features/tags-and-chargeback.md): `{name: value}` on keys and on projects. A key's effective tags are its
 * project's, overlaid by its own; they are computed when either changes and written onto the key item, so every
 * reader (GET /keys, groupBy=tag, TAG budgets, exports) reads one attribute. Pure.
 */
import type { Tags } from '#shared/db/tags.ts';

export type { Tags };

export const MAX_TAGS = 20;
export const TAG_NAME = /^[a-z0-9_.\-:/]{1,64}$/;
export const MAX_VALUE_CHARS = 256;
// Control characters (C0, DEL, C1) have no place in a label a person reads or a CSV cell.
const CONTROL = /\p{Cc}/u;

/** Why a tag name is not valid, or undefined. */
export function tagNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 64) return 'A tag name has 1–64 characters.';
  if (!TAG_NAME.test(name)) {
    return TAG_NAME.test(name.toLowerCase()) ? 'A tag name is lower case.' : 'A tag name has only the characters a-z 0-9 _ . - : /.';
  }
  return undefined;
}

/** Why a tag value is not valid, or undefined: 1–256 Unicode characters (code points), no control characters. */
export function tagValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'A tag value is a string.';
  const chars = [...value].length;
  if (chars === 0 || chars > MAX_VALUE_CHARS) return `A tag value has 1–${MAX_VALUE_CHARS} characters.`;
  if (CONTROL.test(value)) return 'A tag value has no control characters.';
  return undefined;
}

/** A stored tag map (anything else reads as none). */
export function tagsOf(value: unknown): Tags {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The project's tags overlaid by the key's own. */
export function effectiveTags(projectTags: Tags | undefined, own: Tags | undefined): Tags {
  return sortedTags({ ...(projectTags ?? {}), ...(own ?? {}) });
}

/** The same map with its names in order (so equal maps compare and store alike). */
export function sortedTags(tags: Tags): Tags {
  return Object.fromEntries(Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export const sameTags = (a: Tags, b: Tags) => JSON.stringify(sortedTags(a)) === JSON.stringify(sortedTags(b));

/** A key item's effective tags (a key stored before tags existed: its own, i.e. none). */
export const effectiveTagsOf = (item: Record<string, unknown> | undefined): Tags =>
  item?.effectiveTags !== undefined ? tagsOf(item.effectiveTags) : tagsOf(item?.tags);

/**
 * A `name:value` filter (`GET /keys?tag=`, `GET /spend?tagFilter=`). Names may contain `:` themselves, so every
 * reading of the text is tried: `a:b:c` matches `{a: "b:c"}` and `{"a:b": "c"}`. Without a `:` it matches keys that
 * have the tag at all.
 */
export interface TagFilter {
  text: string;
}

export function tagMatches(tags: Tags, filter: string): boolean {
  if (!filter.includes(':')) return Object.hasOwn(tags, filter);
  for (let i = filter.indexOf(':'); i >= 0; i = filter.indexOf(':', i + 1)) {
    const name = filter.slice(0, i);
    if (Object.hasOwn(tags, name) && tags[name] === filter.slice(i + 1)) return true;
  }
  return false;
}
