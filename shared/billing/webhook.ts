/**
 * The Stripe webhook's domain: a verified event → the account's billing state, applied exactly once, and never
 * overwriting a newer state with an older one.
 *
 * - Exactly once: the event's dedupe item is written in the same transaction as the account update
 *   (shared/db/billing.ts); a replay answers 200 `{received: true, duplicate: true}` and changes nothing.
 * - Ordering: every change carries the event's `created` time; the account keeps the time of the state it holds
 *   (`billingUpdatedAt`) and an update only lands when it is not older (`shouldApply`); in the same second a
 *   CANCELED state is never replaced by a live one (status rank). An older event is recorded (so it is not retried)
 *   and changes nothing.
 * - Routing: the account named by the event (metadata / `client_reference_id`) and the account of its Stripe
 *   customer must agree, and an account only takes events of its own customer; else the event is ignored (logged).
 * - One live subscription: when a second live subscription reaches an account, the newer one (by `created`, then
 *   id) is kept and the other is canceled through the Stripe API (`secondLiveSubscription`).
 * - Access only from verified events: nothing here (nor anywhere) reads the checkout success redirect.
 * - Refused or ignored: an event created more than 5 minutes in the future is refused (400, nothing changes); an
 *   event without a customer is ignored (200).
 *
 * Events: `checkout.session.completed` (links the subscription; its state is re-fetched from Stripe),
 * `customer.subscription.created|updated|deleted`, `invoice.paid`, `invoice.payment_failed`. Others: ignored.
 */
import type { Stripe } from '#shared/billing/stripe.ts';
import { stripe } from '#shared/billing/stripe.ts';
import { billingStatusFromStripe, planForPrice, type PriceTable } from '#shared/billing/plans.ts';
import type { Account, BillingStatus } from '#shared/db/accounts.ts';
import { accountOfStripeCustomer, getAccount } from '#shared/db/accounts.ts';
import { applyStripeEvent, stripeEventRecorded, type BillingChange } from '#shared/db/billing.ts';
import { HttpError } from '#shared/http/errors.ts';
import { logger } from '#shared/http/logger.ts';
import { isId } from '#shared/ids.ts';

export const HANDLED_EVENTS = new Set([
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'invoice.payment_failed',
]);

export interface WebhookReply {
  received: true;
  /** The event was applied before: nothing changed. */
  duplicate?: true;
  /** Not an event we act on, or not about one of our accounts/prices: nothing changed. */
  ignored?: true;
  /** Older than the account's billing state, or about a subscription that is not the account's: nothing changed. */
  stale?: true;
}

/**
 * The ordering rule: a state (`eventTime`, `rank`) may replace the one held (`current`, `currentRank`): a newer
 * second always, the same second when its rank is not lower.
 */
export function shouldApply(current: string | undefined, eventTime: string, currentRank = 1, rank = 1): boolean {
  return current === undefined || current < eventTime || (current === eventTime && currentRank <= rank);
}

/** A subscription's place in "newer": `created` (ISO), then its id, so two subscriptions are never equal. */
export function subscriptionOrder(created: number | undefined | null, subscriptionId: string, fallback: string): string {
  return `${typeof created === 'number' ? iso(created) : fallback}#${subscriptionId}`;
}

/** Stripe's `created` (epoch seconds) as the ISO instant (ms precision) the account stores. */
export function eventTime(created: number): string {
  return new Date(created * 1000).toISOString();
}

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();
const idOf = (value: string | { id: string } | null | undefined): string | undefined =>
  typeof value === 'string' ? value : (value?.id ?? undefined);

/** What a change needs before the account is known. */
export type PlannedChange = Omit<BillingChange, 'accountId'>;
export type EventPlan = { change: PlannedChange } | { ignore: string };

/** Legacy (before API 2025-03-31) subscriptions carried the period on the subscription itself. */
interface LegacyPeriod {
  current_period_start?: number | null;
  current_period_end?: number | null;
}

/**
 * A subscription's state as a change. Since API 2025-03-31 the period lives on the subscription ITEMS
 * (`items.data[i].current_period_start/end`); older payloads had it on the subscription: both are read.
 * An ended subscription (canceled, incomplete_expired) drops the account to FREE with billing status CANCELED.
 */
export function subscriptionChange(sub: Stripe.Subscription, time: string, prices?: PriceTable): EventPlan {
  const status = billingStatusFromStripe(sub.status);
  const subscriptionId = sub.id;
  const customerId = idOf(sub.customer);
  const order = subscriptionOrder(sub.created, sub.id, time);
  if (status === 'CANCELED') {
    return { change: { eventTime: time, plan: 'FREE', billingStatus: 'CANCELED', period: null, subscriptionId, customerId, match: 'current-or-none' } };
  }
  const items = (sub.items?.data ?? []).filter((i): i is Stripe.SubscriptionItem => typeof i === 'object' && i !== null);
  const item = items.find((i) => planForPrice(i.price?.id, prices));
  const plan = item && planForPrice(item.price.id, prices);
  if (!item || !plan) return { ignore: `subscription ${sub.id} sells no price of ours` };
  const legacy = sub as unknown as LegacyPeriod;
  const itemPeriod = item as unknown as LegacyPeriod;
  const start = itemPeriod.current_period_start ?? legacy.current_period_start;
  const end = itemPeriod.current_period_end ?? legacy.current_period_end;
  const period = typeof start === 'number' && typeof end === 'number' ? { start: iso(start), end: iso(end) } : undefined;
  return { change: { eventTime: time, plan, billingStatus: status, period, subscriptionId, subscriptionOrder: order, customerId, match: 'take-over' } };
}

/** The subscription an invoice bills (API 2026: `parent.subscription_details`; older: `invoice.subscription`). */
export function invoiceSubscription(invoice: Stripe.Invoice): string | undefined {
  const fromParent = idOf(invoice.parent?.subscription_details?.subscription);
  if (fromParent) return fromParent;
  const fromLine = invoice.lines?.data?.find((l) => l.parent?.subscription_item_details?.subscription)?.parent?.subscription_item_details
    ?.subscription;
  return fromLine ?? idOf((invoice as unknown as { subscription?: string | { id: string } | null }).subscription);
}

/** The period an invoice paid for: its subscription line's period (the non-proration one first). */
export function invoicePeriod(invoice: Stripe.Invoice): { start: string; end: string } | undefined {
  const lines = invoice.lines?.data ?? [];
  const line =
    lines.find((l) => l.parent?.type === 'subscription_item_details' && !l.parent.subscription_item_details?.proration) ?? lines[0];
  if (!line?.period) return undefined;
  return { start: iso(line.period.start), end: iso(line.period.end) };
}

/** A verified event → the change it makes (the subscription is fetched for checkout sessions). Not the account yet. */
export async function planEvent(event: Stripe.Event, prices?: PriceTable): Promise<EventPlan> {
  const time = eventTime(event.created);
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      const subscriptionId = idOf(session.subscription);
      if (session.mode !== 'subscription' || !subscriptionId) return { ignore: 'not a subscription checkout' };
      // The session says nothing about the subscription's state: ask Stripe for it.
      const sub = await (await stripe()).subscriptions.retrieve(subscriptionId);
      return subscriptionChange(sub, time, prices);
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
      return subscriptionChange(event.data.object, time, prices);
    case 'customer.subscription.deleted': {
      const sub = event.data.object;
      return {
        change: { eventTime: time, plan: 'FREE', billingStatus: 'CANCELED', period: null, subscriptionId: sub.id, customerId: idOf(sub.customer), match: 'current-or-none' },
      };
    }
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      const subscriptionId = invoiceSubscription(invoice);
      if (!subscriptionId) return { ignore: 'not a subscription invoice' };
      const paid = event.type === 'invoice.paid';
      const period = paid ? invoicePeriod(invoice) : undefined;
      const customerId = idOf(invoice.customer);
      return {
        change: {
          eventTime: time,
          billingStatus: paid ? 'ACTIVE' : 'PAST_DUE',
          ...(period ? { period } : {}),
          subscriptionId,
          ...(customerId ? { customerId } : {}),
          match: 'current',
        },
      };
    }
    default:
      return { ignore: `event type ${event.type} is not handled` };
  }
}

/** Where an event goes: the account, or a conflict between what it names and whose customer it carries. */
export type EventRouting = { accountId: string } | { conflict: { named: string; ofCustomer: string } } | { none: true };

/**
 * The account an event is about. It may be named by our metadata / `client_reference_id` (set at checkout) and
 * known from its customer's lookup item (linked at checkout); when both are there they must agree.
 */
export async function accountOfEvent(event: Stripe.Event): Promise<EventRouting> {
  const object = event.data.object as {
    client_reference_id?: string | null;
    metadata?: Record<string, string> | null;
    customer?: string | { id: string } | null;
    parent?: { subscription_details?: { metadata?: Record<string, string> | null } | null } | null;
  };
  const named = [object.client_reference_id, object.metadata?.accountId, object.parent?.subscription_details?.metadata?.accountId].filter(
    (value): value is string => typeof value === 'string' && isId('account', value),
  );
  const customerId = idOf(object.customer);
  const ofCustomer = customerId && /^cus_[A-Za-z0-9_]{1,250}$/.test(customerId) ? await accountOfStripeCustomer(customerId) : undefined;
  const other = named.find((id) => id !== (ofCustomer ?? named[0]));
  if (other) return { conflict: { named: other, ofCustomer: ofCustomer ?? named[0]! } };
  const accountId = ofCustomer ?? named[0];
  return accountId ? { accountId } : { none: true };
}

/** Live: a subscription that bills (or will bill) the customer. */
const isLive = (status: BillingStatus) => status !== 'CANCELED';

/**
 * One live subscription per account: when a live subscription's change reaches an account that holds ANOTHER live
 * subscription of the same customer, the older of the two (by `subscriptionOrder`) is the one to cancel. Pure.
 */
export function secondLiveSubscription(
  account: Pick<Account, 'billingStatus' | 'stripeCustomerId' | 'stripeSubscriptionId' | 'subscriptionOrder'> | undefined,
  change: PlannedChange,
): string | undefined {
  if (!account || change.match !== 'take-over' || !isLive(change.billingStatus) || !change.subscriptionOrder) return undefined;
  const held = account.stripeSubscriptionId;
  if (!held || held === change.subscriptionId || !isLive(account.billingStatus)) return undefined;
  if (!change.customerId || account.stripeCustomerId !== change.customerId) return undefined;
  const heldOrder = account.subscriptionOrder ?? '';
  return heldOrder > change.subscriptionOrder ? change.subscriptionId : held;
}

/** Cancels a subscription through the Stripe API; one that is canceled already is fine. */
async function cancelSubscription(subscriptionId: string, context: Record<string, string>): Promise<void> {
  try {
    await (await stripe()).subscriptions.cancel(subscriptionId);
    logger.warn('second live subscription canceled: the account keeps the newer one', { ...context, canceledSubscription: subscriptionId });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'resource_missing' || /canceled/i.test((error as Error).message ?? '')) return;
    throw error;
  }
}

/** How far in the future an event's `created` may lie (clock skew): past it the event is refused. */
export const MAX_EVENT_SKEW_MS = 5 * 60 * 1000;

export class EventFromTheFuture extends HttpError {
  constructor(created: number) {
    super(400, 'invalid-event', 'The Stripe event is not valid.', `The event was created at ${eventTime(created)}, more than 5 minutes from now.`);
  }
}

/**
 * Applies one verified Stripe event once. An event created more than 5 minutes from now is refused (400) before
 * anything is read or written: it would hold the account's billing state "newer" than every genuine event to come.
 */
export async function handleStripeEvent(event: Stripe.Event, now = new Date()): Promise<WebhookReply> {
  if (event.created * 1000 > now.getTime() + MAX_EVENT_SKEW_MS) throw new EventFromTheFuture(event.created);
  const context = { stripeEventId: event.id, stripeEventType: event.type };
  if (!HANDLED_EVENTS.has(event.type)) {
    logger.info('stripe event ignored: type not handled', context);
    return { received: true, ignored: true };
  }
  if (await stripeEventRecorded(event.id)) return { received: true, duplicate: true };

  const routing = await accountOfEvent(event);
  if ('conflict' in routing) {
    logger.warn('stripe event ignored: its customer belongs to another account than the one it names', { ...context, ...routing.conflict });
    return { received: true, ignored: true };
  }
  if ('none' in routing) {
    // Answer 200 so Stripe stops retrying an event that can never apply; the log says why.
    logger.warn('stripe event ignored: no account for it', context);
    return { received: true, ignored: true };
  }
  const { accountId } = routing;
  const plan = await planEvent(event);
  if ('ignore' in plan) {
    logger.info(`stripe event ignored: ${plan.ignore}`, { ...context, accountId });
    return { received: true, ignored: true };
  }
  if (!plan.change.customerId) {
    // Every event we act on names its customer; one that doesn't can't be checked against the account's own.
    logger.warn('stripe event ignored: it names no customer', { ...context, accountId });
    return { received: true, ignored: true };
  }
  // A second live subscription: the newer is kept. The older is canceled after the newer took over (so the
  // older's `deleted` event finds it not current), or before the event is recorded when the incoming one is older
  // (so a failed cancel is retried by Stripe's retry of this event).
  const loser = secondLiveSubscription(plan.change.match === 'take-over' ? await getAccount(accountId, true) : undefined, plan.change);
  if (loser && loser === plan.change.subscriptionId) await cancelSubscription(loser, { ...context, accountId });
  const outcome = await applyStripeEvent(event, { ...plan.change, accountId }, now);
  if (loser && loser !== plan.change.subscriptionId && outcome === 'applied') {
    // The event is recorded: a failure here is not retried by Stripe, so it is logged for an operator instead.
    await cancelSubscription(loser, { ...context, accountId }).catch((error: unknown) =>
      logger.error('could not cancel the older live subscription: cancel it in the Stripe dashboard', { ...context, accountId, subscription: loser, error }),
    );
  }
  if (outcome === 'duplicate') return { received: true, duplicate: true };
  if (outcome === 'skipped') {
    logger.info('stripe event recorded without a change: older than the billing state, not the account\'s subscription or customer, or no such account', {
      ...context,
      accountId,
    });
    return { received: true, stale: true };
  }
  logger.info('stripe event applied', { ...context, accountId, plan: plan.change.plan, billingStatus: plan.change.billingStatus });
  return { received: true };
}
