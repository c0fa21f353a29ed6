/** Public ids: prefix + ULID (https://github.com/ulid/spec), monotonic within a process. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isId, newId } from '#shared/ids.ts';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const timeOf = (id: string) => [...id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11)].reduce((t, c) => t * 32 + CROCKFORD.indexOf(c), 0);

afterEach(() => vi.useRealTimers());

describe('newId', () => {
  it('is the prefix and a ULID whose first 10 characters are the millisecond it was made', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-28T21:00:00.123Z'), toFake: ['Date'] });
    const id = newId('budget');
    expect(id).toMatch(/^bud_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(isId('budget', id)).toBe(true);
    expect(isId('rule', id)).toBe(false);
    expect(timeOf(id)).toBe(Date.parse('2026-11-28T21:00:00.123Z'));
  });

  it('ids made in one millisecond, or with the clock going back, still sort in the order they were made', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-28T21:00:01Z'), toFake: ['Date'] });
    const ids = Array.from({ length: 2000 }, () => newId('alert'));
    vi.setSystemTime(Date.parse('2026-11-28T21:00:00Z'));
    ids.push(newId('alert'), newId('alert'));
    vi.setSystemTime(Date.parse('2026-11-28T21:00:02Z'));
    ids.push(newId('alert'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => isId('alert', id))).toBe(true);
    expect(timeOf(ids.at(-2)!)).toBe(Date.parse('2026-11-28T21:00:01Z'));
    expect(timeOf(ids.at(-1)!)).toBe(Date.parse('2026-11-28T21:00:02Z'));
  });

  it('the random part differs between milliseconds', () => {
    const rand = new Set<string>();
    for (let ms = 0; ms < 200; ms++) {
      vi.useFakeTimers({ now: Date.parse('2026-11-28T22:00:00Z') + ms, toFake: ['Date'] });
      rand.add(newId('user').slice(-16));
    }
    expect(rand.size).toBe(200);
  });
});
