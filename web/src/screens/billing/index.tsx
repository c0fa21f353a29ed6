import { api, ok, type Schemas } from '../../api/client.ts';
import { useSubmit } from '../../ui/form.tsx';
import { number, when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan } from '../../ui/me.tsx';
import { ErrorBox, Screen, Show } from '../../ui/states.tsx';

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

export function Billing() {
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
            <p>
              Plan <strong>{s.plan}</strong> · status <strong>{s.billingStatus}</strong>
              {s.graceEndsAt ? ` · grace until ${when(s.graceEndsAt)}` : ''}
            </p>
            <p class="muted">
              This period: {when(s.currentPeriodStart)} to {when(s.currentPeriodEnd)}
            </p>
            <div class="cards">
              <Usage label="Tracked requests" used={s.usage.trackedRequests} limit={s.usage.limit} />
              <Usage label="Keys" used={s.usage.keys} limit={s.usage.keyLimit} />
              <Usage label="Users and invitations" used={s.usage.users} limit={s.usage.userLimit} />
            </div>
            {isAdmin && (
              <div class="actions">
                {s.plan === 'FREE' ? (
                  <>
                    <button type="button" disabled={go.busy} onClick={() => checkout('GROWTH')}>
                      Upgrade to Growth
                    </button>
                    <button type="button" disabled={go.busy} onClick={() => checkout('SCALE')}>
                      Upgrade to Scale
                    </button>
                  </>
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
