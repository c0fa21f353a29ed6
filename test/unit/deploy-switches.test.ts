/**
 * What `-c billing=off` and `-c email=off` do at run time (the stack sets BILLING=off on the billing functions and
 * EMAIL_DELIVERY=off on the functions that send e-mail; test/infra/settings.test.ts checks that it does).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resetConfig } from '#shared/config.ts';
import { PROBLEM_CONTENT_TYPE } from '#shared/http/problem.ts';
import { EMAIL_OFF_ERROR, emailSettings, sendAlertEmail, sendPlainEmail } from '#shared/notify/email.ts';
import type { Alert } from '#shared/alerting/model.ts';
import { apiEvent, lambdaContext } from './helpers.ts';

describe('billing=off: the billing routes answer 503 problem+json "billing is off"', () => {
  beforeEach(() => {
    process.env.BILLING = 'off';
    resetConfig();
  });
  afterEach(() => {
    delete process.env.BILLING;
    resetConfig();
  });

  for (const name of ['checkout', 'portal', 'webhook']) {
    it(`POST /billing/${name}: 503 before anything else (no token, no signature needed to learn it)`, async () => {
      const { handler } = await import(`#functions/billing/${name}.ts`);
      const res = await handler(apiEvent({ body: '{"plan":"GROWTH"}' }), lambdaContext);
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
      const problem = JSON.parse(res.body);
      expect(problem).toMatchObject({ type: '/problems/billing-off', title: 'Billing is off.', status: 503 });
      expect(problem.detail).toMatch(/off in this deployment/);
    });
  }

  it('only with BILLING=off: otherwise the route answers as before (401 without a token)', async () => {
    delete process.env.BILLING;
    resetConfig();
    const { handler } = await import('#functions/billing/checkout.ts');
    expect((await handler(apiEvent({ body: '{"plan":"GROWTH"}' }), lambdaContext)).statusCode).toBe(401);
  });
});

describe('email=off: alerts go by webhook only, nothing is sent nor retried', () => {
  it('EMAIL_DELIVERY=off turns e-mail off in the settings', () => {
    expect(emailSettings({ EMAIL_DELIVERY: 'off' }).off).toBe(true);
    expect(emailSettings({ ALERT_EMAIL_FROM: 'a@b.c' }).off).toBeUndefined();
  });

  it('the e-mail channel fails permanently at once (no SES call, no read of the users)', async () => {
    const alert = { id: 'alt_1', accountId: 'br_1' } as Alert;
    const outcome = await sendAlertEmail(alert, { settings: { from: 'alerts@example.com', off: true } });
    expect(outcome).toEqual({ ok: false, error: EMAIL_OFF_ERROR, permanent: true, sentTo: [], suppressedTo: [] });
  });

  it('an account e-mail (invitation) is refused, not sent', async () => {
    await expect(
      sendPlainEmail({ to: 'x@example.com', subject: 's', lines: ['l'], tag: 't' }, new Date(), { from: 'alerts@example.com', off: true }),
    ).rejects.toThrow(EMAIL_OFF_ERROR);
  });
});
