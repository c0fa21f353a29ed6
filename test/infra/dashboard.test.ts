/**
 * The dashboard in AWS (infra/dashboard.ts): a private S3 bucket read by CloudFront through Origin Access Control,
 * `/api/*` to the HTTP API on the same distribution, SPA routing by a CloudFront Function (no custom error
 * responses), the security headers of the local server, `DashboardUrl`, and `dashboardUrl` defaulting to it.
 * One synth with a small built app as `webDist` and no `dashboardUrl` (bundling skipped).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, DEFAULT_STACK_NAME as STACK_NAME } from '#infra/app.ts';
import { API_PATH_PATTERN, Dashboard, IMMUTABLE, SPA_ROUTING_FILE } from '#infra/dashboard.ts';
import { HTML_HEADERS } from '#local/web.ts';
import { EDGE_SECRET_HEADER } from '#shared/http/client-ip.ts';
import { DASHBOARD_CSP, HSTS_MAX_AGE_SECONDS, PERMISSIONS_POLICY, REFERRER_POLICY } from '#shared/http/dashboard-headers.ts';
import { routes } from '#shared/routes.ts';
import { DEPLOY_CONTEXT, props, ROOT, type Resource } from './template.ts';

/** CloudFront's managed policies, by id (AWS docs "Use managed cache/origin request policies"). */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

const dirs: string[] = [];
let outdir: string;
let webDist: string;
let app: App;
let template: Template;
let resources: Record<string, Resource>;

function tempDir(prefix: string): string {
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.test-data', prefix));
  dirs.push(dir);
  return dir;
}

function only(type: string): [string, Resource] {
  const found = Object.entries(resources).filter(([, r]) => r.Type === type);
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return found[0]!;
}

const distribution = () => props(only('AWS::CloudFront::Distribution')[1]).DistributionConfig as Record<string, any>;
const originById = (id: string) => (distribution().Origins as Record<string, any>[]).find((o) => o.Id === id)!;
const apiBehaviour = () => {
  const behaviours = distribution().CacheBehaviors as Record<string, any>[];
  expect(behaviours).toHaveLength(1);
  return behaviours[0]!;
};
const bucketId = (prefix: string) => Object.entries(resources).find(([id, r]) => r.Type === 'AWS::S3::Bucket' && id.startsWith(prefix))![0];
/** `https://` + the distribution's domain, as the template writes it. */
const distributionUrl = () => ({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [only('AWS::CloudFront::Distribution')[0], 'DomainName'] }]] });

beforeAll(() => {
  webDist = tempDir('web-dist-');
  mkdirSync(join(webDist, 'assets'));
  writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>Burnrate test build</title><script type="module" src="/assets/app-1a2b.js"></script>');
  writeFileSync(join(webDist, 'assets', 'app-1a2b.js'), 'console.log("app")');
  writeFileSync(join(webDist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  outdir = tempDir('cdk.out-');
  const { dashboardUrl: _default, ...context } = DEPLOY_CONTEXT;
  ({ app } = buildApp({ app: { context: { 'aws:cdk:bundling-stacks': [], ...context, webDist }, outdir } }));
  template = Template.fromStack(app.node.children.find((c) => c instanceof Stack) as Stack);
  resources = template.toJSON().Resources as Record<string, Resource>;
}, 60_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the app bucket', () => {
  it('is private, encrypted, SSL-only, without website hosting or ACLs, logged, and retained', () => {
    const logs = bucketId('DashboardLogs');
    template.hasResource('AWS::S3::Bucket', {
      Properties: {
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        LoggingConfiguration: { DestinationBucketName: { Ref: logs }, LogFilePrefix: 's3/' },
        WebsiteConfiguration: Match.absent(),
      },
      DeletionPolicy: 'Retain',
    });
    // The dashboard's two, and the export files' (test/infra/exports.test.ts).
    template.resourceCountIs('AWS::S3::Bucket', 3);
    for (const id of [bucketId('DashboardApp'), logs]) {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('is read by the distribution through Origin Access Control (no OAI), objects only', () => {
    const [oacId, oac] = only('AWS::CloudFront::OriginAccessControl');
    expect(props(oac).OriginAccessControlConfig).toMatchObject({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' });
    template.resourceCountIs('AWS::CloudFront::CloudFrontOriginAccessIdentity', 0);
    const origin = originById(distribution().DefaultCacheBehavior.TargetOriginId);
    expect(origin).toMatchObject({
      DomainName: { 'Fn::GetAtt': [bucketId('DashboardApp'), 'RegionalDomainName'] },
      OriginAccessControlId: { 'Fn::GetAtt': [oacId, 'Id'] },
      S3OriginConfig: { OriginAccessIdentity: '' },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId('DashboardApp') },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudfront.amazonaws.com' },
            Action: 's3:GetObject',
            Condition: { StringEquals: { 'AWS:SourceArn': Match.anyValue() } },
          }),
        ]),
      },
    });
  });
});

describe('the distribution', () => {
  it('sends /api/* to the HTTP API: nothing cached, every method, all viewer headers but Host, HTTPS only', () => {
    const behaviour = apiBehaviour();
    expect(behaviour).toMatchObject({
      PathPattern: '/api/*',
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
      ViewerProtocolPolicy: 'https-only',
    });
    expect(new Set(behaviour.AllowedMethods)).toEqual(new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE']));
    expect(behaviour.FunctionAssociations).toBeUndefined();
    const origin = originById(behaviour.TargetOriginId);
    const [apiId] = only('AWS::ApiGatewayV2::Api');
    expect(origin.DomainName).toEqual({ 'Fn::Join': ['', [{ Ref: apiId }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] });
    expect(origin.CustomOriginConfig).toEqual({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] });
    // The path reaches API Gateway as is: no origin path, and every route of the API is under /api/.
    expect(origin.OriginPath).toBeUndefined();
    const routeKeys = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').map((r) => props(r).RouteKey as string);
    expect(routeKeys).toHaveLength(routes.length);
    const prefix = API_PATH_PATTERN.slice(0, -1);
    for (const key of routeKeys) expect(key.split(' ')[1]!.startsWith(prefix), key).toBe(true);
  });

  it('serves the bucket by default, HTTPS (redirected), cached, with the SPA routing function on viewer request', () => {
    const behaviour = distribution().DefaultCacheBehavior;
    expect(behaviour).toMatchObject({ ViewerProtocolPolicy: 'redirect-to-https', CachePolicyId: CACHING_OPTIMIZED, Compress: true, AllowedMethods: ['GET', 'HEAD'] });
    const [functionId, fn] = only('AWS::CloudFront::Function');
    expect(behaviour.FunctionAssociations).toEqual([{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [functionId, 'FunctionARN'] } }]);
    expect(props(fn)).toMatchObject({ AutoPublish: true, FunctionConfig: { Runtime: 'cloudfront-js-2.0' } });
    // The deployed code is the file test/infra/spa-routing.test.ts runs.
    expect(props(fn).FunctionCode).toBe(readFileSync(SPA_ROUTING_FILE, 'utf8'));
    expect(distribution().DefaultRootObject).toBe('index.html');
  });

  it('has no custom error responses (they would answer the API\'s 403/404 problem+json with index.html)', () => {
    expect(distribution().CustomErrorResponses).toBeUndefined();
  });

  it('writes standard logs to the log bucket, which keeps them 90 days', () => {
    const logs = bucketId('DashboardLogs');
    expect(distribution().Logging).toEqual({ Bucket: { 'Fn::GetAtt': [logs, 'RegionalDomainName'] }, Prefix: 'cloudfront/' });
    expect(props(resources[logs]!).LifecycleConfiguration).toEqual({ Rules: [{ ExpirationInDays: 90, Status: 'Enabled' }] });
    expect(resources[logs]!.DeletionPolicy).toBe('Retain');
  });
});

describe('security headers', () => {
  const policy = () => {
    const [id, resource] = only('AWS::CloudFront::ResponseHeadersPolicy');
    return { id, config: props(resource).ResponseHeadersPolicyConfig as Record<string, any> };
  };

  it('are set on every response, the app\'s and the API\'s', () => {
    const { id } = policy();
    expect(distribution().DefaultCacheBehavior.ResponseHeadersPolicyId).toEqual({ Ref: id });
    expect(apiBehaviour().ResponseHeadersPolicyId).toEqual({ Ref: id });
  });

  it('are the local server\'s: one CSP without inline script, frames refused; HSTS a year or more with subdomains', () => {
    const { SecurityHeadersConfig: security, CustomHeadersConfig: custom } = policy().config;
    expect(security.ContentSecurityPolicy).toEqual({ ContentSecurityPolicy: DASHBOARD_CSP, Override: true });
    expect(security.ContentSecurityPolicy.ContentSecurityPolicy).toBe(HTML_HEADERS['content-security-policy']);
    const directives = Object.fromEntries(DASHBOARD_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['img-src']).toEqual(["'self'", 'data:']);
    expect(security.FrameOptions).toEqual({ FrameOption: HTML_HEADERS['x-frame-options'], Override: true });
    expect(security.ContentTypeOptions).toEqual({ Override: true });
    expect(HTML_HEADERS['x-content-type-options']).toBe('nosniff');
    expect(security.ReferrerPolicy).toEqual({ ReferrerPolicy: REFERRER_POLICY, Override: true });
    expect(HTML_HEADERS['referrer-policy']).toBe(REFERRER_POLICY);
    expect(security.StrictTransportSecurity).toEqual({ AccessControlMaxAgeSec: HSTS_MAX_AGE_SECONDS, IncludeSubdomains: true, Override: true });
    expect(HSTS_MAX_AGE_SECONDS).toBeGreaterThanOrEqual(365 * 24 * 60 * 60);
    expect(custom.Items).toEqual([{ Header: 'Permissions-Policy', Value: PERMISSIONS_POLICY, Override: true }]);
    expect(HTML_HEADERS['permissions-policy']).toBe(PERMISSIONS_POLICY);
  });
});

describe('DashboardUrl', () => {
  it('is an output: https:// and the distribution\'s domain', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.DashboardUrl!.Value).toEqual(distributionUrl());
  });

  it('is the default dashboardUrl: the links in e-mail and Slack, and Stripe\'s return URLs, point into it', () => {
    const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    const env = (description: string | RegExp) => {
      const fn = fns.find((r) => (typeof description === 'string' ? props(r).Description === description : description.test(String(props(r).Description))));
      expect(fn, String(description)).toBeDefined();
      return props(fn!).Environment.Variables as Record<string, unknown>;
    };
    const senders = routes.filter((r) => r.sendsEmail).map((r) => `${r.method} ${r.path}`);
    expect(senders.length).toBeGreaterThan(0);
    for (const description of [...senders, /^Delivers alerts/]) expect(env(description).DASHBOARD_URL, String(description)).toEqual(distributionUrl());
    const under = (path: string) => ({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [only('AWS::CloudFront::Distribution')[0], 'DomainName'] }, path]] });
    expect(env('POST /billing/portal').BILLING_PORTAL_RETURN_URL).toEqual(under('/billing'));
    expect(env('POST /billing/checkout').BILLING_CANCEL_URL).toEqual(under('/billing?checkout=canceled'));
  });
});

describe('the upload of the built app', () => {
  const uploads = () => {
    const found = Object.entries(resources).filter(([, r]) => r.Type === 'Custom::CDKBucketDeployment');
    expect(found).toHaveLength(2);
    const assets = found.find(([, r]) => props(r).Include)!;
    const pages = found.find(([, r]) => !props(r).Include)!;
    return { assets, pages };
  };

  it('puts /assets (hashed names) immutable and never pruned, then every other file revalidated and pruned', () => {
    const { assets, pages } = uploads();
    const bucket = { Ref: bucketId('DashboardApp') };
    expect(props(assets[1])).toMatchObject({ DestinationBucketName: bucket, Exclude: ['*'], Include: ['assets/*'], Prune: false, SystemMetadata: { 'cache-control': IMMUTABLE } });
    expect(props(pages[1])).toMatchObject({ DestinationBucketName: bucket, Exclude: ['assets/*'], Prune: true, SystemMetadata: { 'cache-control': 'no-cache' } });
    expect(props(pages[1]).Include).toBeUndefined();
    // A new index.html never names a chunk that is not uploaded yet.
    expect(pages[1].DependsOn).toContain(assets[0]);
    // No invalidation: nothing but the immutable /assets is cached beyond a revalidation.
    expect(props(pages[1]).DistributionId).toBeUndefined();
  });

  it('uploads the built app (webDist)', () => {
    const { pages } = uploads();
    const [key] = props(pages[1]).SourceObjectKeys as string[];
    app.synth();
    const manifest = JSON.parse(readFileSync(join(outdir, `${STACK_NAME}.assets.json`), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    const asset = manifest.files[key!.replace(/\.zip$/, '')];
    expect(asset?.source.packaging).toBe('zip');
    const staged = join(outdir, asset!.source.path);
    expect(readFileSync(join(staged, 'index.html'), 'utf8')).toBe(readFileSync(join(webDist, 'index.html'), 'utf8'));
    expect(readFileSync(join(staged, 'assets', 'app-1a2b.js'), 'utf8')).toBe('console.log("app")');
  });

  it('with bundling skipped and no webDist, uploads a placeholder page and never reads web/dist', () => {
    const bare = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(bare, 'Bare');
    new Dashboard(stack, 'Dashboard', { api: new HttpApi(stack, 'Api'), edgeSecret: new Secret(stack, 'Edge') });
    const assembly = bare.synth();
    const manifest = JSON.parse(readFileSync(join(assembly.directory, 'Bare.assets.json'), 'utf8')) as { files: Record<string, { source: { path: string } }> };
    const pages = Object.values(manifest.files).map((f) => join(assembly.directory, f.source.path, 'index.html')).filter((f) => existsSync(f));
    expect(pages).toHaveLength(1);
    expect(readFileSync(pages[0]!, 'utf8')).toContain('Placeholder');
  });

  it('refuses a synth without the built app, naming the command that builds it', () => {
    const stack = new Stack(new App({ outdir: tempDir('cdk.out-') }), 'Bare');
    const api = new HttpApi(stack, 'Api');
    expect(() => new Dashboard(stack, 'Dashboard', { api, edgeSecret: new Secret(stack, 'Edge'), webDist: tempDir('empty-dist-') })).toThrow(/index\.html is missing\. Run `npm run build:web` first/);
  });
});

describe('the client address behind CloudFront (per-IP abuse limits)', () => {
  const edgeSecretId = () => {
    const found = Object.entries(resources).filter(([id, r]) => r.Type === 'AWS::SecretsManager::Secret' && id.startsWith('EdgeSecret'));
    expect(found, 'one EdgeSecret').toHaveLength(1);
    const [id, secret] = found[0]!;
    expect(props(secret).GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    expect(props(secret).SecretString).toBeUndefined();
    return id;
  };
  /** A CloudFormation dynamic reference to the whole generated edge secret, resolved at deploy time. */
  const edgeSecretReference = () => ({ 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: edgeSecretId() }, ':SecretString:::}}']] });

  it('/api/* forwards CloudFront-Viewer-Address: the managed AllViewerExceptHostHeader policy (viewer headers but Host, plus CloudFront\'s headers)', () => {
    // AllViewer and AllViewerAndCloudFrontHeaders-2022-06 would pass the viewer's Host on, which the API's endpoint refuses.
    expect(apiBehaviour().OriginRequestPolicyId).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
  });

  it('the API origin sends the edge secret as x-burnrate-edge, a dynamic reference to a generated secret, never a literal', () => {
    const origin = originById(apiBehaviour().TargetOriginId);
    expect(origin.OriginCustomHeaders).toEqual([{ HeaderName: EDGE_SECRET_HEADER, HeaderValue: edgeSecretReference() }]);
    // The app bucket's origin gets no secret.
    expect(originById(distribution().DefaultCacheBehavior.TargetOriginId).OriginCustomHeaders).toBeUndefined();
  });

  it('exactly the functions that count per-IP limits get EDGE_SECRET (the same reference); no function reads it through IAM', () => {
    const withSecret = routes.filter((r) => r.clientIp).map((r) => `${r.method} ${r.path}`);
    expect(withSecret.sort()).toEqual(['POST /auth/change-password', 'POST /auth/forgot-password', 'POST /auth/login', 'POST /auth/register']);
    const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    for (const fn of fns) {
      const description = String(props(fn).Description);
      const env = (props(fn).Environment?.Variables ?? {}) as Record<string, unknown>;
      if (withSecret.includes(description)) expect(env.EDGE_SECRET, description).toEqual(edgeSecretReference());
      else expect(env.EDGE_SECRET, description).toBeUndefined();
    }
    // No policy, attached or inline in a role, names the secret.
    for (const [, policy] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::IAM::Policy')) {
      expect(JSON.stringify(props(policy).PolicyDocument)).not.toContain(edgeSecretId());
    }
    for (const [, role] of Object.entries(resources).filter(([, r]) => r.Type === 'AWS::IAM::Role')) {
      expect(JSON.stringify(props(role).Policies ?? [])).not.toContain(edgeSecretId());
    }
  });

  it('a route has clientIp exactly when its handler asks for the client address (clientIp), so no limited route lacks the secret', () => {
    for (const route of routes) {
      const source = readFileSync(join(ROOT, 'functions', `${route.handler}.ts`), 'utf8');
      expect(source.includes('clientIp(event)'), route.handler).toBe(route.clientIp === true);
      expect(source, route.handler).not.toContain('sourceIp');
    }
  });
});
