/**
 * Plans in words (docs/features/billing.md: the limits; the prices are the Stripe products'). The API names plans and
 * statuses by enum (`GROWTH`, `PAST_DUE`); people read these. Keep the prices equal to the Stripe prices of the
 * deployment (locally: local/stripe-mock.ts's catalog).
 */
import type { Schemas } from '../../api/client.ts';
import { number } from '../../ui/format.ts';

type Plan = Schemas['BillingStatus']['plan'];
type Status = Schemas['BillingStatus']['billingStatus'];

export const PLAN_NAMES: Record<Plan, string> = { FREE: 'Free', GROWTH: 'Growth', SCALE: 'Scale' };

export const STATUS_NAMES: Record<Status, string> = {
  ACTIVE: 'active',
  TRIALING: 'in its trial',
  PAST_DUE: 'payment overdue',
  CANCELED: 'canceled',
  INCOMPLETE: 'waiting for the first payment',
};

export const OFFERS: { plan: Exclude<Plan, 'FREE'>; price: string; requests: number; keys: number; users: number }[] = [
  { plan: 'GROWTH', price: '$49 a month', requests: 1_000_000, keys: 100, users: 25 },
  { plan: 'SCALE', price: '$299 a month', requests: 10_000_000, keys: 1_000, users: 250 },
];

/** "$49 a month · 1,000,000 tracked requests, 100 keys, 25 users" */
export function offerText(offer: (typeof OFFERS)[number]): string {
  return `${offer.price} · ${number(offer.requests)} tracked requests, ${number(offer.keys)} keys, ${number(offer.users)} users`;
}
