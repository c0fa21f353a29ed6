/**
 * The first deploy works or refuses clearly: synth checks the deploy settings (infra/settings.ts) and fails with one
 * line per missing or wrong setting, unless the deployer turns the feature off (`-c billing=off`, `-c email=off`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '#infra/app.ts';
import { DeploySettingsError, readDeploySettings } from '#infra/settings.ts';
import { CORS_EXPOSE_HEADERS } from '#shared/http/cors.ts';
import { CORS_EXPOSE_HEADERS as GATEWAY_EXPOSE_HEADERS } from '#local/gateway.ts';
import { routes } from '#shared/routes.ts';
import { asList, DEPLOY_CONTEXT, props, ROOT, statementsIn, type Resource } from './template.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function synth(context: Record<string, unknown>) {
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  const outdir = mkdtempSync(join(ROOT, '.test-data', 'cdk.out-'));
  dirs.push(outdir);
  return buildApp({ app: { context: { 'aws:cdk:bundling-stacks': [], ...context }, outdir } });
}

const resourcesOf = (stack: ReturnType<typeof synth>['stack']) => Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;

/** The problems a synth refuses with (one line each), or [] when it passes. */
function refusals(context: Record<string, unknown>): string[] {
  try {
    synth(context);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(DeploySettingsError);
    const message = (error as Error).message;
    const lines = message.split('\n').slice(1);
    expect(lines.map((l) => l.replace(/^ {2}- /, ''))).toEqual([...(error as DeploySettingsError).problems]);
    return [...(error as DeploySettingsError).problems];
  }
}

/** Stands for the distribution's URL, the default of `dashboardUrl` (a deploy-time token in the stack). */
const DISTRIBUTION_URL = 'https://d1234abcd.cloudfront.net';
const settings = (values: Record<string, unknown>) => () => readDeploySettings((key) => values[key], DISTRIBUTION_URL);


/** Statements about the connections' own KMS key (its key policy, the Encrypt/Decrypt grants): not the Stripe secret's. */
const notConnectionsKey = (s: { Resource?: unknown }) => s.Resource !== '*' && !JSON.stringify(s.Resource ?? '').includes('ConnectionsKey');

describe('synth refuses a stack that would deploy broken', () => {
  it('with no context: one clear line per missing setting, each saying how to turn the feature off instead', () => {
    const problems = refusals({});
    // dashboardUrl is not among them: it defaults to the CloudFront distribution that serves the dashboard.
    expect(problems.map((p) => p.split(' ')[0])).toEqual(['sesIdentity', 'stripePriceGrowth', 'stripePriceScale']);
    for (const p of problems.filter((x) => x.startsWith('ses'))) expect(p).toContain('-c email=off');
    for (const p of problems.filter((x) => x.startsWith('stripe'))) expect(p).toContain('-c billing=off');
  });

  it('the Stripe prices are required while billing is on (checkout 500, lost upgrades otherwise)', () => {
    const { stripePriceGrowth: _g, ...noGrowth } = DEPLOY_CONTEXT;
    expect(refusals(noGrowth)).toEqual([expect.stringMatching(/^stripePriceGrowth is missing/)]);
    const { stripePriceScale: _s, ...noScale } = DEPLOY_CONTEXT;
    expect(refusals(noScale)).toEqual([expect.stringMatching(/^stripePriceScale is missing/)]);
    expect(refusals({ ...DEPLOY_CONTEXT, stripePriceScale: 'prod_123' })).toEqual([expect.stringMatching(/^stripePriceScale must be a Stripe price id/)]);
  });

  it('sesIdentity is required while e-mail is on', () => {
    const { sesIdentity: _i, ...noIdentity } = DEPLOY_CONTEXT;
    expect(refusals(noIdentity)).toEqual([expect.stringMatching(/^sesIdentity is missing/)]);
    expect(refusals({ ...DEPLOY_CONTEXT, sesIdentity: '*.example.com' })).toEqual([expect.stringMatching(/^sesIdentity must be one SES identity/)]);
  });

  it('dashboardUrl defaults to the distribution (e-mail links and Stripe return URLs under it); a given one is checked', () => {
    const { dashboardUrl: _d, ...noDashboard } = DEPLOY_CONTEXT;
    expect(refusals(noDashboard)).toEqual([]);
    expect(settings(noDashboard)()).toMatchObject({
      dashboardUrl: DISTRIBUTION_URL,
      email: { dashboardUrl: DISTRIBUTION_URL },
      billing: {
        successUrl: `${DISTRIBUTION_URL}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancelUrl: `${DISTRIBUTION_URL}/billing?checkout=canceled`,
        portalReturnUrl: `${DISTRIBUTION_URL}/billing`,
      },
    });
    expect(settings({ ...DEPLOY_CONTEXT, dashboardUrl: 'https://app.example.com/' })()).toMatchObject({
      dashboardUrl: 'https://app.example.com',
      email: { dashboardUrl: 'https://app.example.com' },
      billing: { portalReturnUrl: 'https://app.example.com/billing' },
    });
    expect(refusals({ ...DEPLOY_CONTEXT, dashboardUrl: 'app.example.com' })).toEqual(['dashboardUrl must be an http(s) URL, got "app.example.com"']);
    expect(refusals({ ...DEPLOY_CONTEXT, billingCancelUrl: 'nope' })).toEqual(['billingCancelUrl must be an http(s) URL, got "nope"']);
    expect(settings({ ...DEPLOY_CONTEXT, billingCancelUrl: 'https://example.com/back' })()).toMatchObject({ billing: { cancelUrl: 'https://example.com/back' } });
  });

  it('alertEmailFrom must be inside sesIdentity (SES refuses it at send otherwise)', () => {
    expect(refusals({ ...DEPLOY_CONTEXT, alertEmailFrom: 'alerts@other.com' })).toEqual([
      expect.stringMatching(/^alertEmailFrom alerts@other\.com is outside sesIdentity example\.com/),
    ]);
    // a subdomain is another identity for SES
    expect(refusals({ ...DEPLOY_CONTEXT, alertEmailFrom: 'alerts@mail.example.com' })).toHaveLength(1);
    expect(refusals({ ...DEPLOY_CONTEXT, sesIdentity: 'ops@example.com', alertEmailFrom: 'alerts@example.com' })).toHaveLength(1);
    expect(refusals({ ...DEPLOY_CONTEXT, alertEmailFrom: 'not an address' })).toEqual([expect.stringMatching(/^alertEmailFrom must be an address/)]);
    expect(settings({ ...DEPLOY_CONTEXT, alertEmailFrom: 'Burnrate <Ops@Example.com>' })()).toMatchObject({
      email: { fromAddress: 'Ops@Example.com', alertEmailFrom: 'Burnrate <Ops@Example.com>' },
    });
    expect(settings({ ...DEPLOY_CONTEXT, sesIdentity: 'ops@example.com' })()).toMatchObject({
      email: { fromAddress: 'ops@example.com', alertEmailFrom: 'ops@example.com' },
    });
  });

  it('refuses unknown switch values and a malformed KMS key', () => {
    expect(refusals({ ...DEPLOY_CONTEXT, billing: 'maybe' })).toEqual(['billing must be "on" or "off", got "maybe"']);
    expect(refusals({ ...DEPLOY_CONTEXT, stripeSecretKmsKeyArn: 'alias/stripe' })).toEqual([expect.stringMatching(/^stripeSecretKmsKeyArn must be a KMS key ARN/)]);
  });

  it('passes with the settings, and with the explicit off switches alone', () => {
    expect(refusals(DEPLOY_CONTEXT)).toEqual([]);
    expect(refusals({ billing: 'off', email: 'off' })).toEqual([]);
    expect(() => settings({})()).toThrow(DeploySettingsError);
  });
});

/** The default dashboardUrl as the template writes it: https:// + the distribution's domain name. */
const DISTRIBUTION_URL_IN_TEMPLATE = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [expect.stringMatching(/^DashboardDistribution/), 'DomainName'] }]] };

describe('-c billing=off -c email=off', () => {
  const { stack } = synth({ billing: 'off', email: 'off' });
  const json = resourcesOf(stack);
  const fns = Object.values(json).filter((r) => r.Type === 'AWS::Lambda::Function');
  const env = (fn: Resource) => props(fn).Environment.Variables as Record<string, unknown>;

  it('is cdk-nag clean', () => {
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('billing: the billing functions get BILLING=off (they answer 503) and no Stripe secret, no Function URL', () => {
    const billing = routes.filter((r) => r.stripe).map((r) => `${r.method} ${r.path}`);
    expect(billing.length).toBeGreaterThan(0);
    for (const fn of fns) {
      const isBilling = billing.includes(props(fn).Description);
      expect(env(fn).BILLING, props(fn).Description).toBe(isBilling ? 'off' : undefined);
      expect(Object.keys(env(fn)).filter((k) => k.startsWith('STRIPE_') || k.startsWith('BILLING_'))).toEqual([]);
    }
    const actions = statementsIn(json).filter(notConnectionsKey).flatMap((s) => asList(s.Action));
    expect(actions.filter((a) => a.startsWith('secretsmanager:') || a.startsWith('kms:'))).toEqual([]);
    expect(Object.values(json).filter((r) => r.Type === 'AWS::Lambda::Url')).toEqual([]);
  });

  it('e-mail: nothing may call SES; the functions that send e-mail are told EMAIL_DELIVERY=off', () => {
    expect(statementsIn(json).flatMap((s) => asList(s.Action)).filter((a) => a.startsWith('ses:'))).toEqual([]);
    const senders = fns.filter((fn) => env(fn).EMAIL_DELIVERY !== undefined);
    expect(senders.map((fn) => props(fn).Description).sort()).toEqual(
      ['Delivers alerts from the alerts queue: e-mail (SES) and signed webhooks', ...routes.filter((r) => r.sendsEmail).map((r) => `${r.method} ${r.path}`)].sort(),
    );
    for (const fn of senders) {
      expect(env(fn).EMAIL_DELIVERY).toBe('off');
      expect(env(fn).ALERT_EMAIL_FROM).toBeUndefined();
      // Slack messages still link into the dashboard: its URL (the distribution's by default) is still given.
      expect(env(fn).DASHBOARD_URL, props(fn).Description).toEqual(DISTRIBUTION_URL_IN_TEMPLATE);
    }
  });
});

describe('deploy hygiene', () => {
  const json = resourcesOf(synth({ ...DEPLOY_CONTEXT, stripeSecretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab' }).stack);

  it('protects the table from deletion (and retains it)', () => {
    const [table] = Object.values(json).filter((r) => r.Type === 'AWS::DynamoDB::Table');
    expect(props(table!).DeletionProtectionEnabled).toBe(true);
    expect(table!.DeletionPolicy).toBe('Retain');
  });

  it('stripeSecretKmsKeyArn: the billing functions may decrypt with that key, only through Secrets Manager', () => {
    const kms = statementsIn(json).filter(notConnectionsKey).filter((s) => asList(s.Action).some((a) => a.startsWith('kms:')));
    expect(kms).toHaveLength(routes.filter((r) => r.stripe).length);
    for (const s of kms) {
      expect(s.Action).toBe('kms:Decrypt');
      expect(s.Resource).toBe('arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab');
      expect(JSON.stringify(s.Condition)).toContain('kms:ViaService');
      expect(JSON.stringify(s.Condition)).toContain('secretsmanager.');
    }
    // without the setting, no KMS permission at all
    expect(statementsIn(resourcesOf(synth(DEPLOY_CONTEXT).stack)).filter(notConnectionsKey).flatMap((s) => asList(s.Action)).filter((a) => a.startsWith('kms:'))).toEqual([]);
  });
});

describe('CORS exposed headers: one list for API Gateway, the handlers and the local gateway', () => {
  it('the three agree, and name the headers a browser must read', async () => {
    const json = resourcesOf(synth(DEPLOY_CONTEXT).stack);
    const [api] = Object.values(json).filter((r) => r.Type === 'AWS::ApiGatewayV2::Api');
    const inAws = props(api!).CorsConfiguration.ExposeHeaders as string[];
    expect(inAws).toEqual([...CORS_EXPOSE_HEADERS]);
    expect(inAws).toEqual(expect.arrayContaining(['x-request-id', 'retry-after', 'location']));
    expect(GATEWAY_EXPOSE_HEADERS.split(',')).toEqual(inAws);
    const { handler } = (await import('#functions/health/get.ts')) as {
      handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
    };
    const event = {
      version: '2.0',
      routeKey: 'GET /api/health',
      rawPath: '/api/health',
      rawQueryString: '',
      headers: { origin: 'https://app.example.com' },
      requestContext: { requestId: 'r-1', http: { method: 'GET', path: '/api/health' } },
      isBase64Encoded: false,
    } as unknown as APIGatewayProxyEventV2;
    const result = await handler(event, { awsRequestId: 'r-1', functionName: 'health' } as Context);
    expect(String(result.headers?.['Access-Control-Expose-Headers'] ?? result.headers?.['access-control-expose-headers']).split(',')).toEqual(inAws);
  });
});
