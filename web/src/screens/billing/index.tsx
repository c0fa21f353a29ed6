import { api, ok, type Schemas } from '../../api/client.ts';
import { useSubmit } from '../../ui/form.tsx';
import { number, UTC_NOTE, when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { ErrorBox, Screen, Show } from '../../ui/states.tsx';
import { OFFERS, offerText, PLAN_NAMES, STATUS_NAMES } from './plans.ts';

function Usage({ label, used, limit }: { label: string; used: number; limit: number }) {
  const pct = limit > 0 ? Math.min(100, (used / limit) * 100) : 0;
  const state = pct >= 100 ? 'exceeded' : pct >= 80 ? 'warning' : 'ok';
  return (
    <div class="card">
      <div>
        {label}: {number(used)} of {number(limit)}
      </div>
      <div class={`bar ${state}`} role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)}>
        <span style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

export function Billing({ query }: { query: URLSearchParams }) {
  const back = query.get('checkout');
  const isAdmin = useCan('admin');
  const status = useLoad(() => ok(api.GET('/billing/status')), []);
  const go = useSubmit();
  const checkout = (plan: Schemas['CheckoutRequest']['plan']) =>
    void go.run(async () => {
      location.assign((await ok(api.POST('/billing/checkout', { body: { plan } }))).url);
    });
  document.title = 'Billing · Burnrate';
  return (
    <Screen title="Billing">
      <Show state={status}>
        {(s) => (
          <>
            {back === 'success' && (
              <p class="notice" role="status">
                Thank you! Your plan changes as soon as Stripe confirms the payment{s.plan === 'FREE' ? ' (reload in a moment)' : ''}.
              </p>
            )}
            {back === 'canceled' && (
              <p class="notice" role="status">
                Checkout canceled: nothing was charged and nothing changed.
              </p>
            )}
            <p data-testid="plan">
              You are on the <strong>{PLAN_NAMES[s.plan]}</strong> plan, {STATUS_NAMES[s.billingStatus]}
              {s.graceEndsAt ? `, with a grace period until ${when(s.graceEndsAt)}` : ''}.
            </p>
            <p class="muted">
              This period: {when(s.currentPeriodStart)} to {when(s.currentPeriodEnd)}. {UTC_NOTE}
            </p>
            <div class="cards">
              <Usage label="Tracked requests" used={s.usage.trackedRequests} limit={s.usage.limit} />
              <Usage label="Keys" used={s.usage.keys} limit={s.usage.keyLimit} />
              <Usage label="Users and invitations" used={s.usage.users} limit={s.usage.userLimit} />
            </div>
            {isAdmin && (
              <div class="actions">
                {s.plan === 'FREE' ? (
                  OFFERS.map((offer) => (
                    <button type="button" class="offer" key={offer.plan} disabled={go.busy} onClick={() => checkout(offer.plan)}>
                      Upgrade to {PLAN_NAMES[offer.plan]}
                      <small>{offerText(offer)}</small>
                    </button>
                  ))
                ) : (
                  <button
                    type="button"
                    disabled={go.busy}
                    onClick={() =>
                      void go.run(async () => {
                        location.assign((await ok(api.POST('/billing/portal'))).url);
                      })
                    }
                  >
                    Manage the subscription
                  </button>
                )}
              </div>
            )}
            <ErrorBox error={go.error} />
          </>
        )}
      </Show>
    </Screen>
  );
}
