/** Checkout and the portal return to the dashboard origin the user came from, only when it is the configured one's loopback twin. */
import { describe, expect, it } from 'vitest';
import { returnOrigin, returnUrl } from '#shared/billing/return-origin.ts';

describe('return origin', () => {
  it('takes the loopback twin of the dashboard (same scheme and port), nothing else', () => {
    expect(returnOrigin('http://localhost:3000', 'http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(returnOrigin('http://127.0.0.1:3000', 'http://localhost:3000')).toBe('http://localhost:3000');
    expect(returnOrigin('http://localhost:3000', 'http://[::1]:3000')).toBe('http://[::1]:3000');
    expect(returnOrigin('http://localhost:3000', 'http://localhost:3000')).toBe('http://localhost:3000');
    for (const other of ['http://127.0.0.1:3001', 'https://127.0.0.1:3000', 'http://evil.example:3000', 'http://127.0.0.1:3000/path', 'null', undefined]) {
      expect(returnOrigin('http://localhost:3000', other), String(other)).toBeUndefined();
    }
    expect(returnOrigin('https://app.burnrate.example', 'https://127.0.0.1')).toBeUndefined();
  });

  it('puts it in a URL of the dashboard, or hands it to a page elsewhere that forwards', () => {
    expect(returnUrl('http://localhost:3000/billing?checkout=success', 'http://localhost:3000', 'http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000/billing?checkout=success');
    expect(returnUrl('http://127.0.0.1:9999/app/billing/success?session_id={CHECKOUT_SESSION_ID}', 'http://localhost:3000', 'http://127.0.0.1:3000')).toBe(
      'http://127.0.0.1:9999/app/billing/success?session_id={CHECKOUT_SESSION_ID}&return_origin=http%3A%2F%2F127.0.0.1%3A3000',
    );
    expect(returnUrl('https://app.example/billing', 'https://app.example', undefined)).toBe('https://app.example/billing');
  });
});
