/**
 * The Slack channel: one message per alert to the rule's Slack incoming-webhook URL, with `text` (what
 * notifications show) and Block Kit `blocks` — what fired, the amount against the threshold, the key by its label
 * (else hint, else hash prefix), a link to the alert in the dashboard. Delivered, claimed and retried by shared/notify/deliver.ts exactly like webhooks (2xx is
 * sent; any other status, a network error or the timeout is retried up to its attempts).
 *
 * Where it may go: `https://hooks.slack.com/…` only; on the local stack (ALLOW_INSECURE_WEBHOOKS) also a loopback
 * `http:` receiver (127.0.0.1, [::1], localhost), so the demo and the tests can show the message.
 */
import { config } from '#shared/config.ts';
import { alertKeyName, type Alert } from '#shared/alerting/model.ts';
import { formatUsd } from '#shared/pricing/money.ts';

export const SLACK_TIMEOUT_MS = 5_000;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why `value` cannot be a Slack webhook URL, or undefined if it can. */
export function slackUrlProblem(value: string, allowInsecure: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'slackWebhookUrl must be a URL.';
  }
  if (url.username || url.password) return 'slackWebhookUrl must not carry credentials.';
  if (url.protocol === 'https:' && url.hostname === 'hooks.slack.com' && url.port === '' && url.pathname.length > 1) return undefined;
  if (allowInsecure && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return allowInsecure
    ? 'slackWebhookUrl must be a Slack incoming-webhook URL (https://hooks.slack.com/…) or a loopback http: receiver.'
    : 'slackWebhookUrl must be a Slack incoming-webhook URL (https://hooks.slack.com/…).';
}

/**
 * Slack reads `&`, `<` and `>` in `text` and mrkdwn as control characters (`<https://evil|click here>` is a link):
 * user text (rule and budget names, key labels and hints) is escaped as Slack documents, so it shows as typed.
 */
export const slackEscape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The message (Block Kit). `appUrl` links to the alert in the dashboard. Each amount once, exact, in dollars. */
export function slackMessage(alert: Alert, appUrl: string) {
  const link = `${appUrl}/alerts/${alert.id}`;
  const keyName = alertKeyName(alert);
  const fields = [
    { type: 'mrkdwn', text: `*Alert*\n${alert.type.replaceAll('_', ' ')}` },
    { type: 'mrkdwn', text: `*Period*\n${alert.period}` },
    ...(alert.observedMicros !== null && alert.thresholdMicros !== null
      ? [{ type: 'mrkdwn', text: `*Amount*\n${formatUsd(alert.observedMicros)} against ${formatUsd(alert.thresholdMicros)}` }]
      : []),
    ...(keyName !== undefined ? [{ type: 'mrkdwn', text: `*Key*\n${slackEscape(keyName)}` }] : []),
    ...(keyName === undefined && alert.keyHashes.length > 1 ? [{ type: 'mrkdwn', text: `*Keys*\n${alert.keyHashes.length}` }] : []),
  ];
  return {
    text: `${slackEscape(alert.title)} — ${link}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: alert.title.slice(0, 150), emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: slackEscape(alert.message).slice(0, 3000) } },
      { type: 'section', fields },
      { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the alert' }, url: link }] },
    ],
  };
}

export type SlackOutcome = { ok: true } | { ok: false; error: string; permanent?: boolean };

export async function sendSlack(alert: Alert & { slackWebhookUrl?: string }, options: { allowInsecure: boolean; timeoutMs?: number }): Promise<SlackOutcome> {
  const url = alert.slackWebhookUrl;
  if (!url) return { ok: false, error: 'the alert has no Slack webhook URL', permanent: true };
  const problem = slackUrlProblem(url, options.allowInsecure);
  if (problem) return { ok: false, error: problem, permanent: true };
  const timeoutMs = options.timeoutMs ?? SLACK_TIMEOUT_MS;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(slackMessage(alert, config().appUrl)),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    return res.status >= 200 && res.status < 300 ? { ok: true } : { ok: false, error: `HTTP ${res.status}` };
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return { ok: false, error: `timeout after ${timeoutMs / 1000} s` };
    return { ok: false, error: 'network error' };
  }
}
