/** What an act did, in words: the detail of its state, its log entry and its alert. */
import { providerName } from '#shared/providers/names.ts';
import { leverOffer } from '#shared/enforcement/offers.ts';
import type { Act, Hold, Target } from '#shared/enforcement/model.ts';

export const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function onText(t: Target, cents?: number): string {
  const p = providerName(t.provider);
  if (t.kind === 'key') return `Key ${t.name} ${leverOffer(t.provider)?.keySwitchWords ?? 'stopped'} at ${p}`;
  if (t.kind === 'project') return `${p} project ${t.name}: hard spend limit ${usd(cents ?? 0)} a month, enforced by ${p}`;
  return `Key ${t.name} refused by the Burnrate reporter`;
}

export function offText(t: Target): string {
  const p = providerName(t.provider);
  if (t.kind === 'key') return `Key ${t.name} active again at ${p}`;
  if (t.kind === 'project') return `${p} project ${t.name}: Burnrate's spend limit removed`;
  return `Key ${t.name} let through by the reporter again`;
}

/** A holder's name for people: `budget "Name"`, `anomaly rule …`. */
export const holderName = (h: Pick<Hold, 'kind' | 'id' | 'name'>) => `${h.kind === 'budget' ? 'budget' : 'anomaly rule'} ${h.name ? `"${h.name}"` : h.id}`;

/** Holders joined or left a target that stays held. */
export function heldText(t: Target, act: Pick<Act, 'holds'>): string {
  const what = t.kind === 'project' ? `${providerName(t.provider)} project ${t.name}'s limit` : `Key ${t.name}`;
  return `${what} stays ${t.kind === 'project' ? 'set' : 'stopped'}, held by ${act.holds.map(holderName).join(', ')}`;
}
