/** Limits that follow payment, the ordering tie-break and the one-live-subscription rule (pure). */
import { describe, expect, it } from 'vitest';
import { graceEnd, limitsInForce, PAST_DUE_GRACE_MS } from '#shared/billing/limits.ts';
import { PLANS, statusRank } from '#shared/billing/plans.ts';
import { secondLiveSubscription, shouldApply, subscriptionOrder, type PlannedChange } from '#shared/billing/webhook.ts';
import { planLimitText } from '#shared/alerting/plan-limit.ts';

const NOW = new Date('2026-11-23T12:00:00.000Z');
const free = { trackedRequests: PLANS.FREE.trackedRequests, keys: PLANS.FREE.keys, users: PLANS.FREE.users, customers: PLANS.FREE.customers };
const growth = { trackedRequests: PLANS.GROWTH.trackedRequests, keys: PLANS.GROWTH.keys, users: PLANS.GROWTH.users, customers: PLANS.GROWTH.customers };

describe('limits in force', () => {
  it('seats per plan are those of docs/features/billing.md: FREE 3, GROWTH 25, SCALE 250', () => {
    expect([PLANS.FREE.users, PLANS.GROWTH.users, PLANS.SCALE.users]).toEqual([3, 25, 250]);
  });

  it('ACTIVE and TRIALING: the plan’s limits, no grace', () => {
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'ACTIVE' }, NOW)).toEqual({ ...growth, graceEndsAt: null });
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'TRIALING' }, NOW)).toEqual({ ...growth, graceEndsAt: null });
  });

  it('INCOMPLETE and CANCELED: FREE’s limits whatever the plan says', () => {
    expect(limitsInForce({ plan: 'SCALE', billingStatus: 'INCOMPLETE' }, NOW)).toEqual({ ...free, graceEndsAt: null });
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'CANCELED' }, NOW)).toEqual({ ...free, graceEndsAt: null });
  });

  it('PAST_DUE: the plan’s limits until the grace ends (exclusive), then FREE’s', () => {
    const graceEndsAt = '2026-11-25T00:00:00.000Z';
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'PAST_DUE', graceEndsAt }, NOW)).toEqual({ ...growth, graceEndsAt });
    const justBefore = new Date(Date.parse(graceEndsAt) - 1);
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'PAST_DUE', graceEndsAt }, justBefore).keys).toBe(PLANS.GROWTH.keys);
    const atEnd = new Date(graceEndsAt);
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'PAST_DUE', graceEndsAt }, atEnd)).toEqual({ ...free, graceEndsAt });
  });

  it('PAST_DUE without a stored grace: 7 days from the last billing change', () => {
    const billingUpdatedAt = '2026-11-20T12:00:00.000Z';
    const limits = limitsInForce({ plan: 'GROWTH', billingStatus: 'PAST_DUE', billingUpdatedAt }, NOW);
    expect(limits).toEqual({ ...growth, graceEndsAt: '2026-11-27T12:00:00.000Z' });
    expect(limitsInForce({ plan: 'GROWTH', billingStatus: 'PAST_DUE' }, NOW)).toEqual({ ...free, graceEndsAt: null });
  });

  it('the grace is 7 days from the failure', () => {
    expect(PAST_DUE_GRACE_MS).toBe(7 * 86_400_000);
    expect(graceEnd('2026-11-23T10:00:00.000Z')).toBe('2026-11-30T10:00:00.000Z');
  });
});

describe('ordering: created, then status', () => {
  it('a newer second always applies; an older never', () => {
    expect(shouldApply('2026-11-23T10:00:00.000Z', '2026-11-23T10:00:01.000Z', 2, 1)).toBe(true);
    expect(shouldApply('2026-11-23T10:00:01.000Z', '2026-11-23T10:00:00.000Z', 1, 2)).toBe(false);
    expect(shouldApply(undefined, '2026-11-23T10:00:00.000Z')).toBe(true);
  });

  it('in the same second a canceled state is never made live again, but can follow a live one', () => {
    const t = '2026-11-23T10:00:00.000Z';
    expect(shouldApply(t, t, statusRank('CANCELED'), statusRank('ACTIVE'))).toBe(false);
    expect(shouldApply(t, t, statusRank('ACTIVE'), statusRank('CANCELED'))).toBe(true);
    expect(shouldApply(t, t, statusRank('ACTIVE'), statusRank('PAST_DUE'))).toBe(true);
  });
});

describe('one live subscription', () => {
  const T = '2026-11-23T10:00:00.000Z';
  const older = subscriptionOrder(1_700_000_000, 'sub_old', T);
  const newer = subscriptionOrder(1_700_000_100, 'sub_new', T);
  const account = { billingStatus: 'ACTIVE' as const, stripeCustomerId: 'cus_1', stripeSubscriptionId: 'sub_old', subscriptionOrder: older };
  const change = (over: Partial<PlannedChange> = {}): PlannedChange => ({
    eventTime: T,
    plan: 'SCALE',
    billingStatus: 'ACTIVE',
    subscriptionId: 'sub_new',
    subscriptionOrder: newer,
    customerId: 'cus_1',
    match: 'take-over',
    ...over,
  });

  it('orders by created, then id', () => {
    expect(older < newer).toBe(true);
    expect(subscriptionOrder(5, 'sub_a', T) < subscriptionOrder(5, 'sub_b', T)).toBe(true);
    expect(subscriptionOrder(undefined, 'sub_a', T)).toBe(`${T}#sub_a`);
  });

  it('a newer live subscription: the held one is canceled', () => {
    expect(secondLiveSubscription(account, change())).toBe('sub_old');
  });

  it('an older live subscription arriving: it is the one canceled', () => {
    const held = { ...account, stripeSubscriptionId: 'sub_new', subscriptionOrder: newer };
    expect(secondLiveSubscription(held, change({ subscriptionId: 'sub_old', subscriptionOrder: older }))).toBe('sub_old');
  });

  it('nothing to cancel: same subscription, the held one ended, a canceled change, another customer, no account', () => {
    expect(secondLiveSubscription({ ...account, stripeSubscriptionId: 'sub_new' }, change())).toBeUndefined();
    expect(secondLiveSubscription({ ...account, billingStatus: 'CANCELED' }, change())).toBeUndefined();
    expect(secondLiveSubscription(account, change({ billingStatus: 'CANCELED', match: 'current-or-none' }))).toBeUndefined();
    expect(secondLiveSubscription(account, change({ customerId: 'cus_2' }))).toBeUndefined();
    expect(secondLiveSubscription(undefined, change())).toBeUndefined();
  });
});

describe('the plan_limit alert says which limit was reached', () => {
  const period = { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' };
  it('tracked requests, keys, or both; with the sizes of the limits in force', () => {
    const growth = { plan: 'GROWTH' as const, billingStatus: 'ACTIVE' as const };
    const requests = planLimitText(growth, period, ['trackedRequests'], NOW);
    expect(requests.title).toBe('Plan limit reached: tracked requests (GROWTH)');
    expect(requests.message).toContain('the 1,000,000 tracked requests of the period');
    expect(requests.message).not.toContain('keys');
    const keys = planLimitText(growth, period, ['keys'], NOW);
    expect(keys.title).toBe('Plan limit reached: keys (GROWTH)');
    expect(keys.message).toContain('the 100 keys');
    // Past the grace: FREE's limits are the ones in force, and the text says so.
    const lapsed = planLimitText({ plan: 'GROWTH', billingStatus: 'CANCELED' }, period, ['trackedRequests', 'keys'], NOW);
    expect(lapsed.title).toBe('Plan limit reached: tracked requests and keys (GROWTH)');
    expect(lapsed.message).toContain('the 10,000 tracked requests of the period and the 5 keys');
  });
});
