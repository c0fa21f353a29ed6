/**
 * Provider connections in people's words: the status, a wait (Retry-After), where to create an admin key. Pure (the
 * generated types only), so unit tests import it without a browser.
 */
import type { components } from '../../api/schema.d.ts';

type Connection = components['schemas']['Connection'];
export type Provider = Connection['provider'];

export const PROVIDER_NAMES: Record<Provider, string> = { openai: 'OpenAI', anthropic: 'Anthropic', openrouter: 'OpenRouter' };

/** The status as a person reads it, and the badge's class. */
export function statusWords(status: Connection['status']): { text: string; badge: 'ok' | 'warning' | 'exceeded' } {
  if (status === 'active') return { text: 'Active', badge: 'ok' };
  if (status === 'paused') return { text: 'Paused', badge: 'warning' };
  return { text: 'Needs attention', badge: 'exceeded' };
}

/** A Retry-After in seconds as words: `in 45 seconds`, `in 1 minute`, `in 2 minutes`; unknown: `in a minute`. */
export function waitWords(retryAfter: string | null | undefined): string {
  const seconds = retryAfter && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : NaN;
  if (!Number.isFinite(seconds) || seconds < 0) return 'in a minute';
  if (seconds <= 1) return 'in a second';
  if (seconds < 60) return `in ${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? 'in 1 minute' : `in ${minutes} minutes`;
}

/**
 * Where an admin of each provider creates the key Burnrate needs, and which permission it takes
 * (https://platform.openai.com/docs/api-reference/admin-api-keys,
 * https://platform.claude.com/docs/en/manage-claude/usage-cost-api). Paths as the consoles name them, no deep links
 * that could move.
 */
export const ADMIN_KEY_HELP: Record<Provider, { where: string; who: string; looks: string }> = {
  openai: {
    where: 'platform.openai.com → Settings → Organization → Admin keys → Create new admin key.',
    who: 'Only an organization Owner can create one. Read-only permissions are enough: Burnrate only reads usage, costs, projects and API keys.',
    looks: 'It starts with sk-admin-. A project key (sk-proj-…) will not work.',
  },
  anthropic: {
    where: 'console.anthropic.com → Settings → Admin keys → Create admin key.',
    who: 'Only an organization member with the admin role can create one (the Admin API is not available to individual accounts). Burnrate only reads usage, costs and API keys.',
    looks: 'It starts with sk-ant-admin. An API key (sk-ant-api…) will not work.',
  },
  openrouter: {
    where: 'openrouter.ai → Settings → Management keys → Create.',
    who: 'A management key lists the account’s API keys (disabled ones too) and reads their daily activity; it cannot make model calls. OpenRouter keeps the last 30 days of activity, so the import starts at most 30 days back.',
    looks: 'It is sk-or-v1- followed by 64 characters, exactly like an inference key: OpenRouter itself tells them apart when Burnrate checks it.',
  },
};

/** How a reconciliation reads: estimates until the provider bills a day, then the bill. */
export const DIFFERENCE_MEANING =
  'Until the provider bills a day, its spend is an estimate from tokens and your price table; once billed, the day shows the bill, to the cent.';

/** Why a line of a settled day differs from its estimate, in words a person can act on. */
export const LINE_REASONS: Record<'priority_tier' | 'not_estimated' | 'unpriced' | 'plan_key_limit', string> = {
  priority_tier: "Priority Tier: billed under your Priority Tier commitment, never in Anthropic's cost report. Shown at the estimate from your price table.",
  not_estimated: 'Billed with no token usage behind it (storage, tools, Console use): shown as billed, on the key that explains it, else on "No API key".',
  unpriced: 'A model your price table lacks: counted at $0 until the bill settled it. Set its price under Prices for the days not billed yet.',
  plan_key_limit: 'Part of this is billed to keys not tracked on your plan: it is not in your figures. Upgrade to track them.',
};

/** A line's words: its reason, else (a difference only) a price the table has otherwise than the provider. */
export function lineReason(reason: keyof typeof LINE_REASONS | null, estimatedUsd: number, billedUsd: number | null): string {
  if (reason) return LINE_REASONS[reason];
  // Half a cent or more apart: the provider priced it otherwise (below that, rounding of many rows).
  if (billedUsd !== null && Math.abs(Math.round(billedUsd * 1e6) - Math.round(estimatedUsd * 1e6)) >= 5_000) return 'Priced otherwise than your table (discounts, tiers): the bill wins.';
  return 'As estimated.';
}

/** billed − computed, or null while the provider has no figure yet. */
export function difference(computedUsd: number, billedUsd: number | null): number | null {
  if (billedUsd === null) return null;
  // In micro-dollars, so the difference of two exact amounts stays exact.
  return (Math.round(billedUsd * 1e6) - Math.round(computedUsd * 1e6)) / 1e6;
}
