/**
 * The SSRF table (shared/net/special-addresses.ts), range by range: an address inside each block is refused, at
 * save (webhookUrlProblem) and at delivery (isNonPublicAddress, which the connection's DNS lookup applies), and
 * the addresses just outside it are not named by it.
 */
import { describe, expect, it } from 'vitest';
import {
  addressProblem,
  checkWebhookTarget,
  formatAddress,
  hostProblem,
  rangeBounds,
  SPECIAL_RANGES,
  specialRangeOf,
  type SpecialRange,
} from '#shared/net/special-addresses.ts';
import { isNonPublicAddress, sendWebhook } from '#shared/notify/webhook.ts';
import { webhookUrlProblem } from '#shared/rules/schemas.ts';
import type { Alert } from '#shared/alerting/model.ts';

const literal = (range: SpecialRange, value: bigint) => {
  const text = formatAddress(range.family, value);
  return range.family === 6 ? `[${text}]` : text;
};

/** True when `inner` lies inside `outer` (or is it). */
function within(inner: SpecialRange, outer: SpecialRange): boolean {
  if (inner.family !== outer.family) return false;
  const a = rangeBounds(inner);
  const b = rangeBounds(outer);
  return a.first >= b.first && a.last <= b.last;
}

describe('the special-purpose address table', () => {
  it.each(SPECIAL_RANGES.map((r) => [r.cidr, r.name, r] as const))('%s (%s): inside refused, just outside not this block', (_cidr, _name, range) => {
    const { first, last } = rangeBounds(range);
    const max = range.family === 4 ? 2n ** 32n - 1n : 2n ** 128n - 1n;
    for (const value of [first, last, first + (last - first) / 2n]) {
      const address = formatAddress(range.family, value);
      const found = specialRangeOf(address);
      expect(found, address).toBeDefined();
      // The address is named by this block or by a more specific one inside it.
      expect(within(found!, range), `${address} → ${found?.cidr}`).toBe(true);
      expect(isNonPublicAddress(address), address).toBe(true);
      expect(webhookUrlProblem(`https://${literal(range, value)}/hook`, false), address).toContain('public host');
    }
    for (const value of [first - 1n, last + 1n].filter((v) => v >= 0n && v <= max)) {
      const address = formatAddress(range.family, value);
      const found = specialRangeOf(address);
      // Just outside: not this block (perhaps an enclosing or neighbouring one, never this one or one inside it).
      expect(found === undefined || !within(found, range), `${address} → ${found?.cidr}`).toBe(true);
    }
  });

  it('names the ranges the review found missing, at save and at delivery', () => {
    for (const address of ['::a00:1', '::ffff:a00:1', '::ffff:8.8.8.8', '64:ff9b:1::1', '2002:a00:1::1', 'fec0::1', '2001:0:4136:e378::1']) {
      expect(isNonPublicAddress(address), address).toBe(true);
      expect(webhookUrlProblem(`https://[${address}]/`, false), address).toContain('public host');
    }
    for (const address of ['100.64.0.1', '100.127.255.255', '198.18.0.1', '198.19.255.255', '192.0.0.1', '192.0.2.1', '240.0.0.1', '255.255.255.255', '224.0.0.1']) {
      expect(isNonPublicAddress(address), address).toBe(true);
      expect(webhookUrlProblem(`https://${address}/`, false), address).toContain('public host');
    }
    expect(webhookUrlProblem('https://[64:ff9b::808:808]/', false)).toContain('public host');
  });

  it('lets public addresses and names through', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '198.17.255.255', '198.20.0.0', '2606:4700:4700::1111', '2a00:1450::1']) {
      expect(specialRangeOf(address), address).toBeUndefined();
      expect(isNonPublicAddress(address), address).toBe(false);
    }
    expect(hostProblem('hooks.example.com', false)).toBeUndefined();
    expect(webhookUrlProblem('https://hooks.example.com/x', false)).toBeUndefined();
  });

  it('refuses names that are never public: localhost, .local, .internal, .home.arpa, single labels', () => {
    for (const host of ['localhost', 'LOCALHOST.', 'api.localhost', 'printer.local', 'db.internal', 'nas.home.arpa', 'intranet']) {
      expect(hostProblem(host, false), host).toBeDefined();
    }
  });

  it('parses every way of writing an address the same', () => {
    expect(specialRangeOf('[::ffff:127.0.0.1]')?.cidr).toBe('::ffff:0:0/96');
    expect(specialRangeOf('::FFFF:7F00:1')?.cidr).toBe('::ffff:0:0/96');
    expect(specialRangeOf('fe80::1%eth0')?.cidr).toBe('fe80::/10');
    expect(specialRangeOf('0:0:0:0:0:0:0:1')?.cidr).toBe('::1/128');
    expect(specialRangeOf('example.com')).toBeUndefined();
  });
});

describe('locally (ALLOW_INSECURE_WEBHOOKS): only loopback receivers, and only they over http', () => {
  it.each(['http://127.0.0.1:9999/hook', 'http://127.8.9.10/', 'http://[::1]:8080/', 'http://localhost:4000/', 'http://hooks.localhost/', 'https://localhost/'])(
    'accepts %s',
    (url) => {
      expect(webhookUrlProblem(url, true)).toBeUndefined();
      expect(checkWebhookTarget(url, true).ok).toBe(true);
    },
  );

  it.each([
    ['a private http receiver', 'http://10.0.0.5/hook', 'https'],
    ['a public http receiver', 'http://hooks.example.com/hook', 'https'],
    ['CGNAT over https', 'https://100.64.0.1/', 'public host'],
    ['the metadata service', 'http://169.254.169.254/latest', 'https'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/', 'https'],
    ['a private https receiver', 'https://192.168.1.1/', 'public host'],
  ])('refuses %s', (_name, url, message) => {
    expect(webhookUrlProblem(url, true)).toContain(message);
  });

  it('addressProblem lets loopback through only when asked', () => {
    expect(addressProblem('127.0.0.1', true)).toBeUndefined();
    expect(addressProblem('::1', true)).toBeUndefined();
    expect(addressProblem('127.0.0.1', false)).toContain('Loopback');
    expect(addressProblem('10.0.0.1', true)).toContain('Private-Use');
  });

  it('delivery refuses a private or public http receiver for good, even locally', async () => {
    const alert = { id: 'alt_1', webhookUrl: '' } as unknown as Alert;
    for (const webhookUrl of ['http://10.0.0.5/hook', 'http://hooks.example.com/hook', 'http://[::ffff:7f00:1]/']) {
      const outcome = await sendWebhook({ ...alert, webhookUrl }, { secrets: ['s'], allowInsecure: true });
      expect(outcome, webhookUrl).toMatchObject({ ok: false, permanent: true });
    }
  });
});
