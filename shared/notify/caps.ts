/**
 * Hourly caps on alert notifications (docs/security.md), so that nobody
 * can make Burnrate mail an inbox or hammer a URL: at most 30 alert e-mails per recipient and 60 POSTs per webhook
 * (or Slack) receiver in a UTC clock hour — every attempt counts, a failing one too. Counted in DynamoDB
 * (shared/db/notify-caps.ts), never in memory: many notifiers run at once.
 *
 * Past the cap a delivery is `suppressed`; the first refusal of an hour for an e-mail recipient is told so
 * (`first-suppressed`), and that one delivery sends the recipient the "paused" notice.
 */
import { createHash } from 'node:crypto';
import { countNotification } from '#shared/db/notify-caps.ts';
import type { Alert, Channel } from '#shared/alerting/model.ts';

export const EMAIL_CAP_PER_HOUR = 30;
export const URL_CAP_PER_HOUR = 60;

/** `email`: one recipient's address; `url`: a webhook or Slack URL. */
export type CapKind = 'email' | 'url';

export const CAPS: Record<CapKind, number> = { email: EMAIL_CAP_PER_HOUR, url: URL_CAP_PER_HOUR };

/** `allowed`: send it. `first-suppressed`: the first refusal this hour (tell the recipient). `suppressed`: refused. */
export type SlotDecision = 'allowed' | 'first-suppressed' | 'suppressed';

export interface HourWindow {
  /** `2026-11-21T22` (UTC). */
  hour: string;
  /** When the window ends: the next full UTC hour. */
  endsAt: Date;
  /** TTL of its counter (epoch seconds): an hour after the window ends. */
  expiresAt: number;
}

/** The UTC clock hour `now` falls in. */
export function hourWindow(now: Date): HourWindow {
  const start = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  const endsAt = new Date(start + 3_600_000);
  return { hour: new Date(start).toISOString().slice(0, 13), endsAt, expiresAt: Math.floor(endsAt.getTime() / 1000) + 3600 };
}

/** What a counter's value after counting (undefined: it stood past the cap already) means. */
export function slotDecision(countAfter: number | undefined, cap: number): SlotDecision {
  if (countAfter === undefined || countAfter > cap + 1) return 'suppressed';
  return countAfter <= cap ? 'allowed' : 'first-suppressed';
}

/**
 * The receiver a webhook or Slack URL reaches, as counted (docs/security.md): scheme and host lower-cased (a trailing
 * dot of the host dropped), the default port dropped, the path normalised (dot segments resolved, `//` collapsed,
 * unreserved characters percent-decoded, a trailing `/` dropped), userinfo, query and fragment removed. The WHATWG
 * URL parser does the scheme, host, port and dot segments; `?N`, `#N`, `//`, `HTTPS://` or `:443` no longer make
 * another receiver. Text that is not a URL is counted as written.
 */
export function receiverOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return url.trim();
  }
  const host = parsed.host.replace(/\.(?=:\d+$|$)/, '');
  const path = parsed.pathname
    .replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
      const char = String.fromCharCode(parseInt(hex, 16));
      return /[A-Za-z0-9\-._~]/.test(char) ? char : escape.toUpperCase();
    })
    .replace(/\/{2,}/g, '/');
  const resolved = new URL(`${parsed.protocol}//${host}${path}`).pathname; // dot segments the decoding revealed
  return `${parsed.protocol}//${host}${resolved.length > 1 ? resolved.replace(/\/+$/, '') : resolved}`;
}

/** The target as counted: e-mail addresses case-insensitively; URLs per receiver (`receiverOf`). Hashed, so no address or URL token lands in a key. */
export function targetHash(kind: CapKind, target: string): string {
  const normal = kind === 'email' ? target.trim().toLowerCase() : receiverOf(target);
  return createHash('sha256').update(normal, 'utf8').digest('hex');
}

/** Takes one notification slot of `target` in the hour of `now`. */
export async function takeSlot(kind: CapKind, target: string, now: Date): Promise<SlotDecision> {
  const window = hourWindow(now);
  const cap = CAPS[kind];
  return slotDecision(await countNotification(kind, targetHash(kind, target), window.hour, cap, window.expiresAt), cap);
}

/**
 * The URL a delivery of `channel` posts to, for channels that post to a URL (webhook; Slack adds its own URL here),
 * else undefined. Every such channel shares the per-receiver cap.
 */
export function channelUrl(alert: Alert, channel: Channel): string | undefined {
  switch (channel) {
    case 'webhook':
      return alert.webhookUrl;
    case 'slack':
      return alert.slackWebhookUrl;
    default:
      return undefined;
  }
}
