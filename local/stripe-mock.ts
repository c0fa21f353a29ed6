/**
 * A local stand-in for Stripe, for `npm start` and the integration tests. The handlers use the REAL Stripe SDK,
 * pointed here with `host`/`port`/`protocol` (env `STRIPE_API_BASE`); this server answers the REST calls the code
 * makes, form-encoded like the SDK sends them, with Stripe-shaped JSON objects (API 2026-10-28: the current period
 * lives on the subscription items, an invoice's subscription under `parent.subscription_details`):
 *
 *   POST /v1/customers                 GET /v1/customers/:id
 *   POST /v1/checkout/sessions         GET /v1/checkout/sessions/:id
 *   GET  /v1/checkout/sessions?customer&status (list)   POST /v1/checkout/sessions/:id/expire
 *   GET  /v1/subscriptions/:id         DELETE /v1/subscriptions/:id (cancel: customer.subscription.deleted follows)
 *   POST /v1/billing_portal/sessions
 *
 * It honours `Idempotency-Key` (same key + same parameters → the first response; other parameters → 400) and the
 * secret key (`Authorization: Bearer sk_test_local`, else 401).
 *
 * And the browser side, plain HTML forms that work without JavaScript:
 *   GET /checkout/<cs_id>   the checkout page; its Pay form (POST /checkout/<cs_id>/pay) creates the subscription
 *                           (active, current period now … now + 1 month) and sends Stripe-signed events —
 *                           checkout.session.completed, customer.subscription.created, invoice.paid — to the API's
 *                           /api/billing/webhook, then redirects (303) to the session's success URL.
 *   GET /portal/<bps_id>    the customer portal, one form per action on each live subscription, each sending the
 *                           events Stripe sends, then redirecting to the return URL:
 *                           "Switch to Burnrate Scale/Growth" (POST …/switch): customer.subscription.updated;
 *                           "Fail the next payment" (POST …/fail): invoice.payment_failed + subscription past_due;
 *                           "Pay the open invoice" (POST …/pay-invoice): invoice.paid + subscription active;
 *                           "Cancel subscription" (POST …/cancel): customer.subscription.deleted.
 *   GET /app/billing/...    the local "dashboard" pages the success / cancel / return URLs point at. They only show
 *                           text: a plan changes through the webhook alone, never through these redirects.
 *
 * State is kept as JSON in `<dataDir>/state.json` (the stack gives it `.data/stripe/`), so a restart loses nothing.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import Stripe from 'stripe';

export const LOCAL_STRIPE_SECRET_KEY = 'sk_test_local';
// Shaped like real price ids (`price_` + letters and digits), so they pass synth's check of the deploy settings too.
export const LOCAL_STRIPE_PRICES = { GROWTH: 'price_1LocalGrowth', SCALE: 'price_1LocalScale' } as const;

/** The catalog the stand-in sells: our two plans' prices (USD cents a month). */
const CATALOG: Record<string, { product: string; name: string; unitAmount: number }> = {
  [LOCAL_STRIPE_PRICES.GROWTH]: { product: 'prod_growth_local', name: 'Burnrate Growth', unitAmount: 4_900 },
  [LOCAL_STRIPE_PRICES.SCALE]: { product: 'prod_scale_local', name: 'Burnrate Scale', unitAmount: 29_900 },
};

/** Stripe keeps idempotency keys for 24 hours. */
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const MAX_BODY_BYTES = 256 * 1024;
/** What the portal page's forms do (POST /portal/<bps_id>/<action>). */
const PORTAL_ACTIONS = new Set(['switch', 'fail', 'pay-invoice', 'cancel']);

export interface StripeMockOptions {
  /** 0: any free port. */
  port: number;
  /** @default 127.0.0.1 */
  host?: string;
  /** Where the state file lives (created if missing). */
  dataDir: string;
  /** The API's webhook endpoint, e.g. http://127.0.0.1:3000/api/billing/webhook. */
  webhookUrl: string;
  /**
   * The webhook signing secret: random per data directory (local/stack.ts keeps it under the data folder), never
   * a constant in the source — the handler verifies with it, the stand-in (and the tests) sign with it.
   */
  webhookSecret: string;
  /** @default LOCAL_STRIPE_SECRET_KEY */
  secretKey?: string;
  /**
   * The dashboard's origin (e.g. http://localhost:3000): the success, cancel and portal-return pages send the browser
   * on to its Billing screen (`/billing?checkout=success|canceled`), as a real deployment's URLs would.
   */
  dashboardUrl?: string;
}

export interface StripeMock {
  /** `http://127.0.0.1:<port>`: the API base for the SDK and the origin of the pages. */
  url: string;
  port: number;
  webhookSecret: string;
  /** Local pages the billing redirect URLs can point at. */
  pages: { success: string; cancel: string; portalReturn: string };
  stop(): Promise<void>;
}

type Json = Record<string, unknown>;

interface Delivery {
  at: string;
  status: number | null;
  error?: string;
}

interface State {
  customers: Record<string, Json>;
  checkoutSessions: Record<string, Json>;
  /** The line items of each session (Stripe does not return them on the session unless expanded). */
  sessionLineItems: Record<string, { price: string; quantity: number }[]>;
  subscriptions: Record<string, Json>;
  invoices: Record<string, Json>;
  portalSessions: Record<string, Json>;
  events: Record<string, { type: string; created: number; deliveries: Delivery[] }>;
  idempotency: Record<string, { fingerprint: string; status: number; body: Json; at: number }>;
}

const emptyState = (): State => ({
  customers: {},
  checkoutSessions: {},
  sessionLineItems: {},
  subscriptions: {},
  invoices: {},
  portalSessions: {},
  events: {},
  idempotency: {},
});

class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly extra: Json = {},
  ) {
    super(message);
  }
}

export async function startStripeMock(options: StripeMockOptions): Promise<StripeMock> {
  const host = options.host ?? '127.0.0.1';
  const secretKey = options.secretKey ?? LOCAL_STRIPE_SECRET_KEY;
  const webhookSecret = options.webhookSecret;
  if (!webhookSecret) throw new Error('The Stripe stand-in needs a webhook secret.');
  await mkdir(options.dataDir, { recursive: true });
  const stateFile = join(options.dataDir, 'state.json');
  const state = await loadState(stateFile);

  let saving: Promise<void> = Promise.resolve();
  /** Writes the whole state (tmp file + rename: never half a file), one write after another. */
  const save = () => {
    const text = `${JSON.stringify(state, null, 2)}\n`;
    saving = saving
      .then(async () => {
        await writeFile(`${stateFile}.tmp`, text);
        await rename(`${stateFile}.tmp`, stateFile);
      })
      .catch((error: unknown) => console.error('[stripe-mock] cannot save the state:', error));
    return saving;
  };

  let baseUrl = '';
  const pages = () => ({
    success: `${baseUrl}/app/billing/success?session_id={CHECKOUT_SESSION_ID}`,
    cancel: `${baseUrl}/app/billing/cancel`,
    portalReturn: `${baseUrl}/app/billing`,
  });

  // -------------------------------------------------------------------------------------------------------------
  // Objects

  const now = () => Math.floor(Date.now() / 1000);
  const withUrl = (session: Json, path: string): Json => ({ ...session, url: `${baseUrl}/${path}/${String(session.id)}` });
  const outCheckout = (session: Json) => withUrl(session, 'checkout');
  const outPortal = (session: Json) => withUrl(session, 'portal');

  function priceObject(priceId: string): Json {
    const entry = CATALOG[priceId]!;
    return {
      id: priceId,
      object: 'price',
      active: true,
      currency: 'usd',
      livemode: false,
      nickname: entry.name,
      product: entry.product,
      recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
      type: 'recurring',
      unit_amount: entry.unitAmount,
      metadata: {},
    };
  }

  function requireCustomer(id: unknown, param = 'customer'): Json {
    const customer = typeof id === 'string' ? state.customers[id] : undefined;
    if (!customer) throw new StripeApiError(400, 'invalid_request_error', `No such customer: '${String(id)}'`, { param, code: 'resource_missing' });
    return customer;
  }

  function createCustomer(params: Json): Json {
    const customer: Json = {
      id: newId('cus'),
      object: 'customer',
      created: now(),
      email: typeof params.email === 'string' ? params.email : null,
      name: typeof params.name === 'string' ? params.name : null,
      description: typeof params.description === 'string' ? params.description : null,
      metadata: metadataOf(params.metadata),
      livemode: false,
      currency: null,
      delinquent: false,
    };
    state.customers[customer.id as string] = customer;
    return customer;
  }

  function createCheckoutSession(params: Json): Json {
    if (params.mode !== 'subscription') {
      throw new StripeApiError(400, 'invalid_request_error', 'This stand-in supports mode=subscription only.', { param: 'mode' });
    }
    if (typeof params.success_url !== 'string' || params.success_url === '') {
      throw new StripeApiError(400, 'invalid_request_error', 'Missing required param: success_url.', { param: 'success_url', code: 'parameter_missing' });
    }
    const rawItems = Array.isArray(params.line_items) ? (params.line_items as Json[]) : [];
    if (rawItems.length === 0) {
      throw new StripeApiError(400, 'invalid_request_error', 'Missing required param: line_items.', { param: 'line_items', code: 'parameter_missing' });
    }
    const lineItems = rawItems.map((item, i) => {
      const price = String(item.price ?? '');
      if (!CATALOG[price]) {
        throw new StripeApiError(400, 'invalid_request_error', `No such price: '${price}'`, { param: `line_items[${i}][price]`, code: 'resource_missing' });
      }
      return { price, quantity: Number(item.quantity ?? 1) || 1 };
    });
    const customer = params.customer === undefined ? createCustomer({ email: params.customer_email }) : requireCustomer(params.customer);
    const created = now();
    const subscriptionData = (params.subscription_data ?? {}) as Json;
    const session: Json = {
      id: newId('cs_test', 24),
      object: 'checkout.session',
      mode: 'subscription',
      status: 'open',
      payment_status: 'unpaid',
      created,
      expires_at: created + 24 * 3600,
      livemode: false,
      currency: 'usd',
      amount_subtotal: lineItems.reduce((sum, li) => sum + CATALOG[li.price]!.unitAmount * li.quantity, 0),
      amount_total: lineItems.reduce((sum, li) => sum + CATALOG[li.price]!.unitAmount * li.quantity, 0),
      customer: customer.id,
      customer_email: typeof params.customer_email === 'string' ? params.customer_email : null,
      client_reference_id: typeof params.client_reference_id === 'string' ? params.client_reference_id : null,
      metadata: metadataOf(params.metadata),
      success_url: params.success_url,
      cancel_url: typeof params.cancel_url === 'string' ? params.cancel_url : null,
      subscription: null,
      invoice: null,
      // Not a Stripe field on the session: kept here to create the subscription with it (subscription_data.metadata).
      _subscription_metadata: metadataOf(subscriptionData.metadata),
    };
    state.checkoutSessions[session.id as string] = session;
    state.sessionLineItems[session.id as string] = lineItems;
    return session;
  }

  function createPortalSession(params: Json): Json {
    const customer = requireCustomer(params.customer);
    const session: Json = {
      id: newId('bps'),
      object: 'billing_portal.session',
      created: now(),
      customer: customer.id,
      livemode: false,
      locale: null,
      return_url: typeof params.return_url === 'string' ? params.return_url : null,
    };
    state.portalSessions[session.id as string] = session;
    return session;
  }

  /** Pay: the subscription (active, period now … +1 month on its item), its paid invoice, the completed session. */
  function pay(session: Json): { subscription: Json; invoice: Json } {
    const created = now();
    const periodEnd = addMonth(created);
    const subscriptionId = newId('sub');
    const lineItems = state.sessionLineItems[session.id as string] ?? [];
    const items = lineItems.map((li) => ({
      id: newId('si'),
      object: 'subscription_item',
      created,
      current_period_start: created,
      current_period_end: periodEnd,
      metadata: {},
      price: priceObject(li.price),
      quantity: li.quantity,
      subscription: subscriptionId,
    }));
    const invoiceId = newId('in');
    const subscription: Json = {
      id: subscriptionId,
      object: 'subscription',
      created,
      start_date: created,
      billing_cycle_anchor: created,
      cancel_at: null,
      cancel_at_period_end: false,
      canceled_at: null,
      ended_at: null,
      collection_method: 'charge_automatically',
      currency: 'usd',
      customer: session.customer,
      items: { object: 'list', data: items, has_more: false, total_count: items.length, url: `/v1/subscription_items?subscription=${subscriptionId}` },
      latest_invoice: invoiceId,
      livemode: false,
      metadata: session._subscription_metadata ?? {},
      status: 'active',
      trial_end: null,
      trial_start: null,
    };
    const lines = items.map((item) => ({
      id: newId('il'),
      object: 'line_item',
      amount: CATALOG[(item.price as Json).id as string]!.unitAmount * item.quantity,
      currency: 'usd',
      description: `1 × ${CATALOG[(item.price as Json).id as string]!.name}`,
      invoice: invoiceId,
      livemode: false,
      metadata: {},
      parent: {
        type: 'subscription_item_details',
        invoice_item_details: null,
        subscription_item_details: {
          invoice_item: null,
          proration: false,
          proration_details: { credited_items: null },
          subscription: subscriptionId,
          subscription_item: item.id,
        },
      },
      period: { start: created, end: periodEnd },
      pricing: { type: 'price_details', price_details: { price: (item.price as Json).id, product: (item.price as Json).product }, unit_amount_decimal: null },
      quantity: item.quantity,
    }));
    const total = lines.reduce((sum, l) => sum + (l.amount as number), 0);
    const invoice: Json = {
      id: invoiceId,
      object: 'invoice',
      created,
      customer: session.customer,
      currency: 'usd',
      status: 'paid',
      billing_reason: 'subscription_create',
      collection_method: 'charge_automatically',
      amount_due: total,
      amount_paid: total,
      amount_remaining: 0,
      total,
      subtotal: total,
      livemode: false,
      metadata: {},
      lines: { object: 'list', data: lines, has_more: false, total_count: lines.length, url: `/v1/invoices/${invoiceId}/lines` },
      parent: {
        type: 'subscription_details',
        quote_details: null,
        subscription_details: { metadata: subscription.metadata, subscription: subscriptionId },
      },
      period_start: created,
      period_end: created,
      status_transitions: { finalized_at: created, paid_at: created, marked_uncollectible_at: null, voided_at: null },
    };
    Object.assign(session, { status: 'complete', payment_status: 'paid', subscription: subscriptionId, invoice: invoiceId });
    state.subscriptions[subscriptionId] = subscription;
    state.invoices[invoiceId] = invoice;
    return { subscription, invoice };
  }

  function cancel(subscription: Json): void {
    const at = now();
    Object.assign(subscription, { status: 'canceled', canceled_at: at, ended_at: at, cancellation_details: { reason: 'cancellation_requested', comment: null, feedback: null } });
  }

  // -------------------------------------------------------------------------------------------------------------
  // Events

  function newEvent(type: string, object: Json): Json {
    const { _subscription_metadata: _, ...clean } = object;
    const event: Json = {
      id: newId('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: now(),
      data: { object: object.object === 'checkout.session' ? outCheckout(clean) : clean },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
    state.events[event.id as string] = { type, created: event.created as number, deliveries: [] };
    return event;
  }

  /** Sends the events one after another, each signed like Stripe signs; the first failure stops the rest. */
  async function deliver(events: Json[]): Promise<Delivery | undefined> {
    for (const event of events) {
      const payload = JSON.stringify(event, null, 2);
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
      let delivery: Delivery;
      try {
        const res = await fetch(options.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
          body: payload,
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        delivery = { at: new Date().toISOString(), status: res.status };
      } catch (error) {
        delivery = { at: new Date().toISOString(), status: null, error: error instanceof Error ? error.message : String(error) };
      }
      state.events[event.id as string]?.deliveries.push(delivery);
      if (delivery.status === null || delivery.status >= 300) {
        await save();
        return { ...delivery, error: `${String(event.type)} (${String(event.id)}): ${delivery.error ?? `HTTP ${delivery.status}`}` };
      }
    }
    await save();
    return undefined;
  }

  // -------------------------------------------------------------------------------------------------------------
  // The REST API

  async function api(req: IncomingMessage, res: ServerResponse, method: string, path: string): Promise<void> {
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${secretKey}`) {
      throw new StripeApiError(401, 'invalid_request_error', `Invalid API Key provided: ${auth.replace(/^Bearer\s+/i, '').slice(0, 12)}…`);
    }
    const raw = method === 'POST' ? await readText(req) : '';
    const params = parseForm(method === 'POST' ? raw : (req.url ?? '').split('?')[1] ?? '');
    const key = method === 'POST' ? req.headers['idempotency-key'] : undefined;
    if (typeof key === 'string' && key !== '') {
      const seen = state.idempotency[key];
      const fingerprint = `${method} ${path} ${raw}`;
      if (seen && Date.now() - seen.at < IDEMPOTENCY_TTL_MS) {
        if (seen.fingerprint !== fingerprint) {
          throw new StripeApiError(
            400,
            'idempotency_error',
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          );
        }
        return sendJson(res, seen.status, seen.body, { 'idempotent-replayed': 'true' });
      }
      // route() is synchronous: the key is stored before any other request can look for it.
      const { status, body } = route(method, path, params);
      state.idempotency[key] = { fingerprint, status, body, at: Date.now() };
      await save();
      return sendJson(res, status, body);
    }
    const { status, body } = route(method, path, params);
    if (method !== 'GET') await save();
    sendJson(res, status, body);
    // Events a call causes (a DELETE's subscription.deleted) reach the webhook after the call answered, as in Stripe.
    const events = afterResponse.splice(0);
    if (events.length > 0) void deliver(events);
  }

  /** Events to send once the current API call has answered. */
  const afterResponse: Json[] = [];

  function route(method: string, path: string, params: Json): { status: number; body: Json } {
    const ok = (body: Json) => ({ status: 200, body });
    const segments = path.split('/').filter(Boolean); // ['v1', ...]
    const at = (i: number) => segments[i] ?? '';
    const missing = (kind: string, id: string, param = 'id'): never => {
      throw new StripeApiError(404, 'invalid_request_error', `No such ${kind}: '${id}'`, { param, code: 'resource_missing' });
    };
    if (method === 'POST' && path === '/v1/customers') return ok(createCustomer(params));
    if (method === 'GET' && at(1) === 'customers' && segments.length === 3) return ok(state.customers[at(2)] ?? missing('customer', at(2)));
    if (method === 'POST' && path === '/v1/checkout/sessions') return ok(outCheckout(publicSession(createCheckoutSession(params))));
    if (method === 'GET' && at(1) === 'checkout' && at(2) === 'sessions' && segments.length === 4) {
      const session = state.checkoutSessions[at(3)] ?? missing('checkout.session', at(3), 'session');
      return ok(outCheckout(publicSession(session)));
    }
    if (method === 'GET' && path === '/v1/checkout/sessions') {
      const data = Object.values(state.checkoutSessions)
        .filter((cs) => (params.customer === undefined || cs.customer === params.customer) && (params.status === undefined || cs.status === params.status))
        .sort((a, b) => (b.created as number) - (a.created as number))
        .map((cs) => outCheckout(publicSession(cs)));
      return ok({ object: 'list', data, has_more: false, url: '/v1/checkout/sessions' });
    }
    if (method === 'POST' && at(1) === 'checkout' && at(2) === 'sessions' && at(4) === 'expire' && segments.length === 5) {
      const session = state.checkoutSessions[at(3)] ?? missing('checkout.session', at(3), 'session');
      if (session.status !== 'open') {
        throw new StripeApiError(400, 'invalid_request_error', `Only Checkout Sessions with a status of open can be expired; this one is ${String(session.status)}.`);
      }
      Object.assign(session, { status: 'expired', expires_at: now() });
      return ok(outCheckout(publicSession(session)));
    }
    if (method === 'GET' && at(1) === 'subscriptions' && segments.length === 3) {
      return ok(state.subscriptions[at(2)] ?? missing('subscription', at(2)));
    }
    if (method === 'DELETE' && at(1) === 'subscriptions' && segments.length === 3) {
      const subscription = state.subscriptions[at(2)] ?? missing('subscription', at(2));
      if (subscription.status === 'canceled') {
        throw new StripeApiError(400, 'invalid_request_error', `This subscription is already canceled: ${at(2)}`, { code: 'resource_missing' });
      }
      cancel(subscription);
      afterResponse.push(newEvent('customer.subscription.deleted', subscription));
      return ok(subscription);
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') return ok(outPortal(createPortalSession(params)));
    throw new StripeApiError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}). This local Stripe stand-in implements only the calls Burnrate makes.`);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Pages

  async function page(req: IncomingMessage, res: ServerResponse, method: string, path: string): Promise<void> {
    const segments = path.split('/').filter(Boolean);
    const [area, id, action] = segments;

    if (area === 'checkout' && id && !action && method === 'GET') {
      const session = state.checkoutSessions[id];
      if (!session) return sendHtml(res, 404, 'Checkout not found', '<p>There is no such checkout session.</p>');
      return sendHtml(res, 200, 'Checkout', checkoutPage(session));
    }
    if (area === 'checkout' && id && action === 'pay' && method === 'POST') {
      await readText(req);
      const session = state.checkoutSessions[id];
      if (!session) return sendHtml(res, 404, 'Checkout not found', '<p>There is no such checkout session.</p>');
      if (session.status !== 'open') {
        return sendHtml(res, 409, 'Already paid', `<p>This checkout is ${escapeHtml(String(session.status))} already.</p>${successLink(session)}`);
      }
      // Synchronously, before any await: a second Pay on the same session finds it complete.
      const { subscription, invoice } = pay(session);
      const events = [
        newEvent('checkout.session.completed', session),
        newEvent('customer.subscription.created', subscription),
        newEvent('invoice.paid', invoice),
      ];
      await save();
      const failed = await deliver(events);
      if (failed) {
        return sendHtml(res, 502, 'Paid, but the webhook failed', `<p>The payment went through, but sending the webhook failed: ${escapeHtml(failed.error ?? '')}.</p>${successLink(session)}`);
      }
      return redirect(res, successUrlOf(session));
    }
    if (area === 'portal' && id && !action && method === 'GET') {
      const session = state.portalSessions[id];
      if (!session) return sendHtml(res, 404, 'Portal not found', '<p>There is no such portal session.</p>');
      return sendHtml(res, 200, 'Billing portal', portalPage(session));
    }
    if (area === 'portal' && id && action && PORTAL_ACTIONS.has(action) && method === 'POST') {
      const form = parseForm(await readText(req));
      const session = state.portalSessions[id];
      if (!session) return sendHtml(res, 404, 'Portal not found', '<p>There is no such portal session.</p>');
      const subscription = state.subscriptions[String(form.subscription ?? '')];
      if (!subscription || subscription.customer !== session.customer) {
        return sendHtml(res, 404, 'Subscription not found', '<p>That subscription is not this customer’s.</p>');
      }
      const back = String(session.return_url ?? `/portal/${id}`);
      if (subscription.status === 'canceled') return redirect(res, back);
      const events = portalAction(action, subscription, String(form.price ?? ''));
      if (typeof events === 'string') return sendHtml(res, 409, 'Not possible', `<p>${escapeHtml(events)}</p>`);
      await save();
      const failed = await deliver(events);
      if (failed) return sendHtml(res, 502, 'Done, but the webhook failed', `<p>${escapeHtml(failed.error ?? '')}</p>`);
      return redirect(res, back);
    }
    if (area === 'app' && id === 'billing' && method === 'GET') {
      if (options.dashboardUrl) {
        const outcome = action === 'success' ? '?checkout=success' : action === 'cancel' ? '?checkout=canceled' : '';
        // The API names the origin the user came from when it is the dashboard's loopback twin (127.0.0.1 for localhost).
        const asked = new URL(req.url ?? '/', 'http://stand-in').searchParams.get('return_origin');
        const back = asked && /^http:\/\/(localhost|127\.0\.0\.1|\[::1\]):\d+$/.test(asked) ? asked : options.dashboardUrl;
        return redirect(res, `${back}/billing${outcome}`);
      }
      const text =
        action === 'success'
          ? 'Thank you! Your plan changes as soon as Stripe’s webhook reaches the API (it has, if you paid here).'
          : action === 'cancel'
            ? 'Checkout canceled: nothing was charged and nothing changed.'
            : 'Back from the billing portal.';
      return sendHtml(res, 200, 'Burnrate billing', `<p>${escapeHtml(text)}</p><p>See <code>GET /api/billing/status</code>.</p>`);
    }
    if (path === '/' && method === 'GET') {
      return sendHtml(res, 200, 'Local Stripe', '<p>The local Stripe stand-in of Burnrate. Checkout and portal pages live under /checkout/… and /portal/….</p>');
    }
    return sendHtml(res, 404, 'Not found', '<p>Not found.</p>');
  }

  function checkoutPage(session: Json): string {
    const items = (state.sessionLineItems[session.id as string] ?? [])
      .map((li) => {
        const entry = CATALOG[li.price]!;
        return `<li>${escapeHtml(entry.name)} — ${formatUsd(entry.unitAmount)} / month × ${li.quantity}</li>`;
      })
      .join('');
    const customer = state.customers[session.customer as string];
    const who = customer?.name ? `<p>Customer: ${escapeHtml(String(customer.name))}</p>` : '';
    if (session.status !== 'open') {
      return `<ul>${items}</ul><p>This checkout is ${escapeHtml(String(session.status))}.</p>${successLink(session)}`;
    }
    const cancelLink = session.cancel_url ? `<p><a href="${escapeHtml(String(session.cancel_url))}">Cancel and go back</a></p>` : '';
    return `${who}<ul>${items}</ul>
<p>Total: ${formatUsd(session.amount_total as number)} / month</p>
<form method="post" action="/checkout/${escapeHtml(String(session.id))}/pay">
  <p><label>Card number <input name="card" value="4242 4242 4242 4242" readonly></label> (test mode)</p>
  <button type="submit">Pay</button>
</form>
${cancelLink}`;
  }

  /** A portal action on a live subscription: the events Stripe sends for it, or why it is not possible. */
  function portalAction(action: string, subscription: Json, price: string): Json[] | string {
    const item = ((subscription.items as Json).data as Json[])[0]!;
    switch (action) {
      case 'switch': {
        if (!CATALOG[price]) return 'No such plan.';
        if ((item.price as Json).id === price) return 'The subscription is on that plan already.';
        item.price = priceObject(price);
        return [newEvent('customer.subscription.updated', subscription)];
      }
      case 'fail': {
        if (subscription.status !== 'active' && subscription.status !== 'trialing') return 'Only an active subscription can fail a payment.';
        const invoice = renewalInvoice(subscription, item);
        subscription.status = 'past_due';
        subscription.latest_invoice = invoice.id;
        return [newEvent('invoice.payment_failed', invoice), newEvent('customer.subscription.updated', subscription)];
      }
      case 'pay-invoice': {
        const invoice = state.invoices[String(subscription.latest_invoice ?? '')];
        if (!invoice || invoice.status !== 'open') return 'The subscription has no open invoice.';
        const at = now();
        Object.assign(invoice, { status: 'paid', amount_paid: invoice.amount_due, amount_remaining: 0 });
        (invoice.status_transitions as Json).paid_at = at;
        subscription.status = 'active';
        return [newEvent('invoice.paid', invoice), newEvent('customer.subscription.updated', subscription)];
      }
      case 'cancel':
        cancel(subscription);
        return [newEvent('customer.subscription.deleted', subscription)];
      default:
        return 'Unknown action.';
    }
  }

  /** The renewal invoice of the subscription's current period, left open (its payment failed). */
  function renewalInvoice(subscription: Json, item: Json): Json {
    const created = now();
    const invoiceId = newId('in');
    const priceId = (item.price as Json).id as string;
    const amount = CATALOG[priceId]!.unitAmount;
    const invoice: Json = {
      id: invoiceId,
      object: 'invoice',
      created,
      customer: subscription.customer,
      currency: 'usd',
      status: 'open',
      billing_reason: 'subscription_cycle',
      collection_method: 'charge_automatically',
      amount_due: amount,
      amount_paid: 0,
      amount_remaining: amount,
      total: amount,
      subtotal: amount,
      attempt_count: 1,
      livemode: false,
      metadata: {},
      lines: {
        object: 'list',
        data: [
          {
            id: newId('il'),
            object: 'line_item',
            amount,
            currency: 'usd',
            invoice: invoiceId,
            livemode: false,
            metadata: {},
            parent: {
              type: 'subscription_item_details',
              subscription_item_details: { invoice_item: null, proration: false, subscription: subscription.id, subscription_item: item.id },
            },
            period: { start: item.current_period_start, end: item.current_period_end },
            quantity: 1,
          },
        ],
        has_more: false,
        total_count: 1,
        url: `/v1/invoices/${invoiceId}/lines`,
      },
      parent: { type: 'subscription_details', quote_details: null, subscription_details: { metadata: subscription.metadata, subscription: subscription.id } },
      period_start: created,
      period_end: created,
      status_transitions: { finalized_at: created, paid_at: null, marked_uncollectible_at: null, voided_at: null },
    };
    state.invoices[invoiceId] = invoice;
    return invoice;
  }

  function portalPage(session: Json): string {
    const subscriptions = Object.values(state.subscriptions).filter((s) => s.customer === session.customer && s.status !== 'canceled');
    const form = (s: Json, action: string, label: string, extra = '') => `<form method="post" action="/portal/${escapeHtml(String(session.id))}/${action}">
  <input type="hidden" name="subscription" value="${escapeHtml(String(s.id))}">${extra}
  <button type="submit">${escapeHtml(label)}</button>
</form>`;
    const rows = subscriptions
      .map((s) => {
        const item = ((s.items as Json).data as Json[])[0];
        const priceId = item ? ((item.price as Json).id as string) : '';
        const price = CATALOG[priceId];
        const renews = item ? new Date((item.current_period_end as number) * 1000).toISOString().slice(0, 10) : '';
        const switches = Object.entries(CATALOG)
          .filter(([id]) => id !== priceId)
          .map(([id, entry]) => form(s, 'switch', `Switch to ${entry.name}`, `<input type="hidden" name="price" value="${escapeHtml(id)}">`))
          .join('');
        const payment =
          s.status === 'past_due' || s.status === 'unpaid' ? form(s, 'pay-invoice', 'Pay the open invoice') : form(s, 'fail', 'Fail the next payment');
        return `<li>${escapeHtml(price?.name ?? String(s.id))} (${escapeHtml(String(s.status))}, renews ${renews})
${switches}${payment}${form(s, 'cancel', 'Cancel subscription')}</li>`;
      })
      .join('');
    const back = session.return_url ? `<p><a href="${escapeHtml(String(session.return_url))}">Return to Burnrate</a></p>` : '';
    return `${rows ? `<ul>${rows}</ul>` : '<p>No active subscription.</p>'}${back}`;
  }

  const successUrlOf = (session: Json) => String(session.success_url).replaceAll('{CHECKOUT_SESSION_ID}', String(session.id));
  const successLink = (session: Json) => `<p><a href="${escapeHtml(successUrlOf(session))}">Continue</a></p>`;

  // -------------------------------------------------------------------------------------------------------------
  // Server

  const server: Server = createServer((req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const work = path.startsWith('/v1/') ? api(req, res, method, path) : page(req, res, method, path);
    work.catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof StripeApiError) {
        return sendJson(res, error.status, { error: { type: error.type, message: error.message, ...error.extra } });
      }
      console.error('[stripe-mock]', error);
      return sendJson(res, 500, { error: { type: 'api_error', message: 'The local Stripe stand-in failed.' } });
    });
  });
  server.keepAliveTimeout = 5000;
  server.listen({ port: options.port, host });
  try {
    await once(server, 'listening');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    throw new Error(`Port ${options.port} (the Stripe stand-in) is already in use. Stop whatever holds it, or set STRIPE_PORT to another port.`);
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  baseUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;

  return {
    url: baseUrl,
    port,
    webhookSecret,
    pages: pages(),
    async stop() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
      await saving;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

async function loadState(file: string): Promise<State> {
  try {
    return { ...emptyState(), ...(JSON.parse(await readFile(file, 'utf8')) as Partial<State>) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') console.error(`[stripe-mock] ${file} is unreadable; starting empty:`, error);
    return emptyState();
  }
}

/** Without the stand-in's own bookkeeping fields. */
function publicSession(session: Json): Json {
  const { _subscription_metadata: _, ...rest } = session;
  return rest;
}

function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

function metadataOf(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, String(v)]));
}

/** One calendar month later (the day clamped to the month's length: Jan 31 → Feb 28/29), like Stripe's billing. */
export function addMonth(epochSeconds: number): number {
  const d = new Date(epochSeconds * 1000);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const lastDay = new Date(Date.UTC(year, month + 2, 0)).getUTCDate();
  return Math.floor(
    Date.UTC(year, month + 1, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000,
  );
}

/**
 * Parses a form body the way Stripe reads the SDK's encoding: `a[b][0][c]=v` → `{a: {b: [{c: 'v'}]}}`.
 */
export function parseForm(text: string): Json {
  const root: Json = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const match = /^([^[\]]+)((?:\[[^\]]*\])*)$/.exec(key);
    if (!match) continue;
    const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^\]]*)\]/g)].map((m) => m[1]!)];
    if (path.some((part) => part === '__proto__' || part === 'constructor' || part === 'prototype')) continue;
    let node: Json | unknown[] = root;
    for (let i = 0; i < path.length; i++) {
      const part = path[i]!;
      const last = i === path.length - 1;
      const container = node as Record<string, unknown>;
      if (last) {
        container[part] = value;
      } else {
        const nextIsIndex = /^\d+$/.test(path[i + 1]!);
        container[part] ??= nextIsIndex ? [] : {};
        node = container[part] as Json | unknown[];
      }
    }
  }
  return root;
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new StripeApiError(413, 'invalid_request_error', 'The request body is too large.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body, null, 2);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': `req_${randomBytes(7).toString('hex')}`,
    'stripe-version': Stripe.API_VERSION,
    ...headers,
  });
  res.end(text);
}

function sendHtml(res: ServerResponse, status: number, title: string, body: string): void {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Local Stripe</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto;">
<h1>${escapeHtml(title)}</h1>
<p><small>Local Stripe stand-in (test mode) — no real payment is made.</small></p>
${body}
</body></html>
`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(html), 'cache-control': 'no-store' });
  res.end(html);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'content-length': 0 });
  res.end();
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function formatUsd(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
