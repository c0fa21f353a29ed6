/**
 * Coverage (docs/features/spend-and-exports.md): whether the figures of a range are whole, and
 * if not, why — derived, never stored as a second truth: from the connections (their backfill, status, the keys
 * and requests their last sync held back at a plan limit), the account's plan, the unpriced counters of the days
 * asked, and which days the providers' bills have settled. `complete` is false when a note other than `estimated`
 * applies. Reads: ONE Query of the account partition (the account item and its connections, each of which keeps
 * the days its provider has not billed yet); the unpriced requests come from the aggregates the answer read.
 */
import { toAccount } from '#shared/db/accounts.ts';
import { accountWithConnections, type Connection } from '#shared/db/connections.ts';
import { limitsInForce } from '#shared/billing/limits.ts';
import { providerName } from '#shared/connections/alerts.ts';
import { daysBetween, isoDate } from '#shared/time/periods.ts';

export type CoverageCode = 'plan_customer_limit' | 'plan_key_limit' | 'plan_request_limit' | 'sync_pending' | 'sync_failing' | 'unpriced' | 'estimated';

export interface CoverageNote {
  code: CoverageCode;
  message: string;
  provider?: string;
  from?: string;
  to?: string;
  count?: number;
}

export interface Coverage {
  complete: boolean;
  notes: CoverageNote[];
}

const PLAN_NAMES: Record<string, string> = { FREE: 'Free', GROWTH: 'Growth', SCALE: 'Scale' };
const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
const max = (a: string, b: string) => (a > b ? a : b);
const min = (a: string, b: string) => (a < b ? a : b);

/** The days a connection still has to import: its first sync's, or a backfill under way (null: none). */
export function pendingDays(c: Pick<Connection, 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom'>, today: string): [string, string] | null {
  if (c.lastSuccessAt === null) return c.backfillTo ? [c.cursor ?? c.importedFrom, c.backfillTo] : [c.importedFrom, today];
  if (c.cursor !== null && c.backfillTo) return [c.cursor, c.backfillTo];
  return null;
}

export interface CoverageInput {
  from: string;
  to: string;
  provider?: string;
  /** Requests of models without a price in the range and filters asked (from the aggregates the answer read). */
  unpricedRequests: bigint;
}

/** Whether a connection's day is settled: imported, past, not pending, billed (not in its unsettled days). */
export function isSettled(c: Pick<Connection, 'cursor' | 'backfillTo' | 'lastSuccessAt' | 'importedFrom' | 'unsettledDays'>, date: string, today: string): boolean {
  if (date < c.importedFrom || date >= today) return false;
  const pending = pendingDays(c, today);
  if (pending && date >= pending[0] && date <= pending[1]) return false;
  return !(c.unsettledDays ?? []).includes(date);
}

/** The notes of one range (pure but for the reads named above); `settled` per day for groupBy=day. */
export async function coverageOf(accountId: string, input: CoverageInput, now = new Date()): Promise<Coverage & { settled: Set<string> }> {
  const today = isoDate(now);
  const { account: accountItem, connections } = await accountWithConnections(accountId);
  const account = accountItem ? toAccount(accountItem) : undefined;
  const inScope = connections.filter((c) => input.provider === undefined || c.provider === input.provider);
  const notes: CoverageNote[] = [];
  const plan = PLAN_NAMES[account?.plan ?? 'FREE'] ?? account?.plan ?? 'Free';
  const limits = account ? limitsInForce(account, now) : undefined;
  const range = daysBetween(input.from, input.to);
  const settledSets = inScope.map((c) => new Set(range.filter((d) => isSettled(c, d, today))));
  for (const [i, c] of inScope.entries()) {
    const name = providerName(c.provider);
    if ((c.untrackedKeys ?? 0) > 0) {
      const n = c.untrackedKeys!;
      notes.push({
        code: 'plan_key_limit',
        provider: c.provider,
        count: n,
        message: `${plural(n, `${name} key is`, `${name} keys are`)} not tracked on the ${plan} plan (${plural(limits?.keys ?? 0, 'key', 'keys')} at most): their spend is not in these figures. Upgrade to track them; their history is imported with the next sync.`,
      });
    }
    const heldTo = c.requestsHeldTo ?? input.to;
    if (c.requestsHeldFrom && c.requestsHeldFrom <= input.to && heldTo >= input.from) {
      const [from, to] = [max(c.requestsHeldFrom, input.from), min(heldTo, input.to)];
      notes.push({
        code: 'plan_request_limit',
        provider: c.provider,
        from,
        to,
        message: `Some ${name} requests and tokens ${from === to ? `of ${from}` : `between ${from} and ${to}`} are not imported: the ${plan} plan's ${(limits?.trackedRequests ?? 0).toLocaleString('en-US')} tracked requests of this period went to the newer requests first. Days ${name} has billed still show their billed spend. Upgrade to import the rest.`,
      });
    }
    const pending = pendingDays(c, today);
    if (pending && pending[0] <= input.to && pending[1] >= input.from) {
      notes.push({
        code: 'sync_pending',
        provider: c.provider,
        from: max(pending[0], input.from),
        to: min(pending[1], input.to),
        message: `${name} is still being imported: ${max(pending[0], input.from)} to ${min(pending[1], input.to)} ${pending[0] === pending[1] ? 'is' : 'are'} not in these figures yet. They fill in over the next minutes.`,
      });
    }
    if (c.status === 'error') {
      notes.push({
        code: 'sync_failing',
        provider: c.provider,
        ...(c.lastSuccessAt ? { from: c.lastSuccessAt.slice(0, 10) } : {}),
        message: `${name} cannot be synced (${c.statusDetail ?? 'the provider refused the admin key'}). Figures after ${c.lastSuccessAt ? c.lastSuccessAt.slice(0, 16).replace('T', ' ') + ' UTC' : 'the connection was made'} are missing until it is fixed under Connections.`,
      });
    }
    // Days of the range the provider has not billed yet (today always): their spend is the token estimate.
    const imported = daysBetween(max(input.from, c.importedFrom), min(input.to, today)).filter((d) => d >= c.importedFrom);
    const open = imported.filter((d) => !settledSets[i]!.has(d));
    if (open.length > 0) {
      notes.push({
        code: 'estimated',
        provider: c.provider,
        from: open[0]!,
        to: open.at(-1)!,
        count: open.length,
        message: `${name}: ${plural(open.length, 'day', 'days')} (${open[0] === open.at(-1) ? open[0] : `${open[0]} to ${open.at(-1)}`}) ${open.length === 1 ? 'is' : 'are'} an estimate from tokens and the price table until ${name} bills ${open.length === 1 ? 'it' : 'them'}.`,
      });
    }
  }
  const unpriced = input.unpricedRequests;
  if (unpriced > 0n) {
    notes.push({
      code: 'unpriced',
      count: Number(unpriced),
      message: `${plural(Number(unpriced), 'request', 'requests')} used a model without a price and count $0 until the provider's bill settles the day or you set a price under Prices.`,
    });
  }
  // A day is settled when every connection in scope has its bill (and there is one).
  const settled = new Set<string>();
  if (inScope.length > 0) for (const d of range) if (settledSets.every((s) => s.has(d))) settled.add(d);
  return { complete: notes.every((n) => n.code === 'estimated'), notes, settled };
}
