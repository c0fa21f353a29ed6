/** Provider connections in the dashboard's words (web/src/screens/connections/words.ts): status, waits, the difference. */
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY_HELP, difference, statusWords, waitWords } from '../../web/src/screens/connections/words.ts';

describe('connection words', () => {
  it('names each status as a person reads it', () => {
    expect(statusWords('active').text).toBe('Active');
    expect(statusWords('paused').text).toBe('Paused');
    expect(statusWords('error').text).toBe('Needs attention');
  });

  it('writes a Retry-After in words', () => {
    expect(waitWords('45')).toBe('in 45 seconds');
    expect(waitWords('1')).toBe('in a second');
    expect(waitWords('60')).toBe('in 1 minute');
    expect(waitWords('61')).toBe('in 2 minutes');
    // Missing or an HTTP date (which the API does not send): a minute, the API's own spacing of syncs.
    expect(waitWords(null)).toBe('in a minute');
    expect(waitWords('Wed, 21 Oct 2026 07:28:00 GMT')).toBe('in a minute');
  });

  it('takes the difference in micro-dollars: exact where binary doubles are not', () => {
    expect(difference(0.1, 0.3)).toBe(0.2);
    expect(difference(12.345678, 12.3)).toBe(-0.045678);
    expect(difference(5, null)).toBeNull();
  });

  it('says for each provider where the admin key is made and who may make it', () => {
    expect(ADMIN_KEY_HELP.openai.where).toContain('Organization → Admin keys');
    expect(ADMIN_KEY_HELP.openai.who).toMatch(/Owner.*Read-only/s);
    expect(ADMIN_KEY_HELP.anthropic.where).toContain('console.anthropic.com → Settings → Admin keys');
    expect(ADMIN_KEY_HELP.anthropic.who).toContain('admin role');
  });
});
