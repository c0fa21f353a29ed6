/**
 * The deploy settings of the stack, from `-c key=value` context (or props in tests), checked at synth: a stack
 * that would deploy and then fail (checkout 500, lost upgrades, refused e-mail) is refused here instead, with one
 * line per missing or wrong setting. A feature the deployer does not want is turned off explicitly:
 * `-c billing=off` (the billing routes answer 503), `-c email=off` (alerts go by webhook only, no SES at all).
 */

/** Name of the Secrets Manager secret with the Stripe keys (context `stripeSecretName`). */
export const DEFAULT_STRIPE_SECRET_NAME = 'burnrate/stripe';

export interface EmailDeploySettings {
  /** The SES identity (a domain or an address) e-mail is sent from (context `sesIdentity`). */
  sesIdentity: string;
  /** The From header (context `alertEmailFrom`, default `alerts@<sesIdentity>`): an address inside `sesIdentity`. */
  alertEmailFrom: string;
  /** The bare address of `alertEmailFrom`: what SES checks and the IAM `ses:FromAddress` condition names. */
  fromAddress: string;
  /** The dashboard's URL, which e-mailed links point into (context `dashboardUrl`, default the distribution's). */
  dashboardUrl: string;
}

export interface BillingDeploySettings {
  /** Secrets Manager secret name, JSON `{secretKey, webhookSecret}`, created outside the stack. */
  secretName: string;
  /** The customer-managed KMS key that encrypts the secret, if any (context `stripeSecretKmsKeyArn`). */
  secretKmsKeyArn?: string;
  prices: { GROWTH: string; SCALE: string };
  successUrl: string;
  cancelUrl: string;
  portalReturnUrl: string;
}

export interface DeploySettings {
  billing: BillingDeploySettings | 'off';
  email: EmailDeploySettings | 'off';
  /**
   * Context `dashboardUrl`, else the default given to {@link readDeploySettings} (the CloudFront distribution's
   * `https://<domain>`, which serves the dashboard): where e-mailed links point; billing's redirect URLs default under it.
   */
  dashboardUrl: string;
}

/** Thrown by {@link readDeploySettings}: every problem found, one per line. */
export class DeploySettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      `Burnrate cannot be deployed with these settings (see docs/deployment.md):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'DeploySettingsError';
  }
}

/** Reads one setting: a non-blank string, or undefined. */
export type SettingReader = (key: string) => unknown;

const SWITCH = /^(on|off)$/;
const PRICE_ID = /^price_[A-Za-z0-9]+$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
const ADDRESS = /^[^@\s<>]+@([^@\s<>]+)$/;
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

/** The bare address of `alerts@x` or `Name <alerts@x>`. */
export function addressOf(from: string): string | undefined {
  const angle = /<([^<>\s]+)>\s*$/.exec(from.trim());
  const address = angle ? angle[1]! : from.trim();
  return ADDRESS.test(address) ? address : undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * Every setting checked at once. Throws a {@link DeploySettingsError} naming each missing or wrong setting.
 * `defaultDashboardUrl` is used when context `dashboardUrl` is not given (in the stack: the distribution's URL,
 * a deploy-time token, so it is not checked here).
 */
export function readDeploySettings(read: SettingReader, defaultDashboardUrl: string): DeploySettings {
  const text = (key: string): string | undefined => {
    const value = read(key);
    if (typeof value === 'boolean') return String(value);
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const problems: string[] = [];
  const onOff = (key: 'billing' | 'email'): boolean => {
    const value = (text(key) ?? 'on').toLowerCase().replace(/^true$/, 'on').replace(/^false$/, 'off');
    if (!SWITCH.test(value)) problems.push(`${key} must be "on" or "off", got "${text(key)}"`);
    return value !== 'off';
  };
  const billingOn = onOff('billing');
  const emailOn = onOff('email');

  const givenDashboardUrl = text('dashboardUrl')?.replace(/\/+$/, '');
  if (givenDashboardUrl !== undefined && !isHttpUrl(givenDashboardUrl)) {
    problems.push(`dashboardUrl must be an http(s) URL, got "${givenDashboardUrl}"`);
  }
  const dashboardUrl = givenDashboardUrl ?? defaultDashboardUrl;

  let email: DeploySettings['email'] = 'off';
  if (emailOn) {
    const sesIdentity = text('sesIdentity');
    if (!sesIdentity) {
      problems.push(
        'sesIdentity is missing: the SES identity (domain or address) alert e-mail is sent from, verified in this region ' +
          '(-c sesIdentity=mail.example.com), or turn e-mail off with -c email=off',
      );
    } else if (!DOMAIN.test(sesIdentity) && !ADDRESS.test(sesIdentity)) {
      problems.push(`sesIdentity must be one SES identity (a domain or an address), got "${sesIdentity}"`);
    }
    const identity = sesIdentity?.toLowerCase();
    const alertEmailFrom = text('alertEmailFrom') ?? (identity ? (identity.includes('@') ? identity : `alerts@${identity}`) : '');
    const fromAddress = addressOf(alertEmailFrom);
    if (text('alertEmailFrom') && !fromAddress) {
      problems.push(`alertEmailFrom must be an address or "Name <address>", got "${alertEmailFrom}"`);
    } else if (identity && fromAddress && !inIdentity(fromAddress, identity)) {
      problems.push(
        `alertEmailFrom ${fromAddress} is outside sesIdentity ${identity}: SES refuses to send it (use an address ` +
          `${identity.includes('@') ? `equal to ${identity}` : `@${identity}`}, or verify that identity and set sesIdentity to it)`,
      );
    }
    if (sesIdentity && fromAddress) email = { sesIdentity: identity!, alertEmailFrom, fromAddress, dashboardUrl };
  }

  let billing: DeploySettings['billing'] = 'off';
  if (billingOn) {
    const price = (key: 'stripePriceGrowth' | 'stripePriceScale', plan: string): string | undefined => {
      const value = text(key);
      if (!value) {
        problems.push(
          `${key} is missing: the Stripe price id of the ${plan} plan (-c ${key}=price_...), or turn billing off with -c billing=off`,
        );
      } else if (!PRICE_ID.test(value)) {
        problems.push(`${key} must be a Stripe price id (price_...), got "${value}"`);
      }
      return value;
    };
    const growth = price('stripePriceGrowth', 'Growth');
    const scale = price('stripePriceScale', 'Scale');
    // A given URL is checked; the defaults are under dashboardUrl (checked above, or the distribution's).
    const url = (key: string, fallback: string): string => {
      const given = text(key);
      if (given && !isHttpUrl(given.replace('{CHECKOUT_SESSION_ID}', 'x'))) problems.push(`${key} must be an http(s) URL, got "${given}"`);
      return given ?? fallback;
    };
    const successUrl = url('billingSuccessUrl', `${dashboardUrl}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`);
    const cancelUrl = url('billingCancelUrl', `${dashboardUrl}/billing?checkout=canceled`);
    const portalReturnUrl = url('billingPortalReturnUrl', `${dashboardUrl}/billing`);
    const secretKmsKeyArn = text('stripeSecretKmsKeyArn');
    if (secretKmsKeyArn && !KMS_KEY_ARN.test(secretKmsKeyArn)) {
      problems.push(`stripeSecretKmsKeyArn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), got "${secretKmsKeyArn}"`);
    }
    if (growth && scale) {
      billing = {
        secretName: text('stripeSecretName') ?? DEFAULT_STRIPE_SECRET_NAME,
        ...(secretKmsKeyArn ? { secretKmsKeyArn } : {}),
        prices: { GROWTH: growth, SCALE: scale },
        successUrl,
        cancelUrl,
        portalReturnUrl,
      };
    }
  }

  if (problems.length > 0) throw new DeploySettingsError(problems);
  return { billing, email, dashboardUrl };
}

/** SES: a domain identity covers the addresses at exactly that domain; an address identity covers itself. */
function inIdentity(address: string, identity: string): boolean {
  const lower = address.toLowerCase();
  return identity.includes('@') ? lower === identity : lower.split('@')[1] === identity;
}
