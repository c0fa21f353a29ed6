/**
 * `npm run demo:seed` (local/demo-seed.ts) against the real local stack: a newcomer signs up, seeds their own account,
 * and the API shows the demo month — the dashboard's first screen has something to draw.
 */
import { describe, expect, it } from 'vitest';
import { seedDemo } from '#local/demo-seed.ts';
import { api, registerUser, stack } from './harness.ts';

describe('demo:seed', () => {
  it('fills the account a newcomer just signed up with: a dozen labelled keys, a month of spend, budgets, rules and alerts', async () => {
    const user = await registerUser();
    const demo = await seedDemo(stack().apiUrl, user.email, user.password);
    expect(demo.email).toBe(user.email);
    expect(demo.events).toBeGreaterThan(1000);
    expect(demo.alerts).toBeGreaterThan(0);

    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 31 * 86_400_000).toISOString().slice(0, 10);
    const spend = await api(`/spend?from=${from}&to=${to}&groupBy=key`, { token: user.token });
    expect(spend.status).toBe(200);
    // Every accepted event lands in the newcomer's own account (the two closing events included).
    expect(spend.body.total.requests).toBe(demo.events + 2);
    expect(spend.body.groups).toHaveLength(12);
    expect(spend.body.groups.map((g: { label: string }) => g.label)).toContain('Support bot');
    expect(spend.body.forecast).not.toBeNull();

    expect((await api('/billing/status', { token: user.token })).body.plan).toBe('GROWTH');
    expect((await api('/budgets', { token: user.token })).body.items).toHaveLength(3);
    expect((await api('/alert-rules', { token: user.token })).body.items).toHaveLength(2);
  }, 120_000);

  it("refuses, saying why, an existing address whose password doesn't sign in", async () => {
    const user = await registerUser();
    await expect(seedDemo(stack().apiUrl, user.email, 'Not-the-password-1')).rejects.toThrow(/already has a user and the password given does not sign in/);
  });
});
