/** What an act did, in words: the detail of its state, its log entry and its alert. */
import { providerName } from '#shared/providers/names.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import type { Act, Hold, Target } from '#shared/db/enforcement-model.ts';

export const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function onText(t: Target, cents?: number): string {
  const p = providerName(t.provider);
  if (t.kind === 'key') return `Key ${t.name} ${leverOffer(t.provider)?.keySwitchWords ?? 'stopped'} at ${p}`;
  if (t.kind === 'project') return `${p} project ${t.name}: hard spend limit ${usd(cents ?? 0)} a month, enforced by ${p}`;
  if (t.kind === 'key_limit') return `${p} key ${t.name}: its own limit set to ${usd(cents ?? 0)} a month (reset monthly), enforced by ${p}`;
  if (t.kind === 'workspace_cap') return `${p} workspace ${t.name}: monthly spend limit ${usd(cents ?? 0)}, enforced by ${p}`;
  return `Key ${t.name} refused by the Burnrate reporter`;
}

export function offText(t: Target): string {
  const p = providerName(t.provider);
  if (t.kind === 'key') return `Key ${t.name} active again at ${p}`;
  if (t.kind === 'project') return `${p} project ${t.name}: Burnrate's spend limit removed`;
  if (t.kind === 'key_limit') return `${p} key ${t.name}: Burnrate's limit removed`;
  if (t.kind === 'workspace_cap') return `${p} workspace ${t.name}: Burnrate's spend limit deleted`;
  return `Key ${t.name} let through by the reporter again`;
}

/** A holder's name for people: `budget "Name"`, `anomaly rule …`. */
export const holderName = (h: Pick<Hold, 'kind' | 'id' | 'name'>) => `${h.kind === 'budget' ? 'budget' : 'anomaly rule'} ${h.name ? `"${h.name}"` : h.id}`;

/** Holders joined or left a target that stays held. */
export function heldText(t: Target, act: Pick<Act, 'holds'>): string {
  const cap = t.kind === 'project' || t.kind === 'key_limit' || t.kind === 'workspace_cap';
  const what = cap ? `${providerName(t.provider)} ${t.kind === 'project' ? 'project' : t.kind === 'key_limit' ? 'key' : 'workspace'} ${t.name}'s limit` : `Key ${t.name}`;
  return `${what} stays ${cap ? 'set' : 'stopped'}, held by ${act.holds.map(holderName).join(', ')}`;
}

/** How a person puts a target back by hand when Burnrate can't (a refused admin key, a deleted connection). */
export function undoByHand(t: Target): string {
  if (t.kind === 'key' && t.provider === 'anthropic') return `set key ${t.name} active again in the Claude Console (Settings → API keys), or POST /v1/organizations/api_keys/${t.keyId} {"status": "active"}`;
  if (t.kind === 'key' && t.provider === 'openrouter') return `enable key ${t.name} again at openrouter.ai/settings/keys, or PATCH /api/v1/keys/${t.keyId} {"disabled": false}`;
  if (t.kind === 'key_limit') return `set key ${t.name}'s limit back at openrouter.ai/settings/keys, or PATCH /api/v1/keys/${t.keyId} {"limit": null}`;
  if (t.kind === 'workspace_cap') return `delete workspace ${t.name}'s spend limit in the Claude Console (Settings → Limits), or DELETE /v1/organizations/spend_limits/{id}`;
  if (t.kind === 'project') return `remove or raise project ${t.name}'s spend limit in the ${providerName(t.provider)} dashboard (Settings → Limits), or DELETE /v1/organization/projects/${t.projectId}/spend_limit`;
  return `nothing: the reporter lets ${t.name} through once the budget is released`;
}
