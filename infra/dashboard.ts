/**
 * The dashboard in AWS: the built app (web/dist) in a private S3 bucket, read by CloudFront through Origin Access
 * Control, and the HTTP API under `/api/*` on the same distribution, so the app talks to its own origin (no CORS).
 * SPA routing by a CloudFront Function on the default behaviour — never by custom error responses, which would
 * turn the API's 403/404 problem+json into index.html.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultStackSynthesizer, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import type { ISource } from 'aws-cdk-lib/aws-s3-deployment';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { API_PREFIX } from '#shared/routes.ts';
import { EDGE_SECRET_HEADER } from '#shared/http/client-ip.ts';
import {
  DASHBOARD_CSP,
  FRAME_OPTIONS,
  HSTS_MAX_AGE_SECONDS,
  PERMISSIONS_POLICY,
} from '#shared/http/dashboard-headers.ts';

/** The built app: `npm run build:web` (infra/app.ts builds it before `cdk synth`/`deploy` when missing or stale). */
export const WEB_DIST = fileURLToPath(new URL('../web/dist', import.meta.url));
/** The CloudFront Function's source (cloudfront-js-2.0), deployed and unit-tested as this one file. */
export const SPA_ROUTING_FILE = fileURLToPath(new URL('./spa-routing.js', import.meta.url));
/** Cache-Control of the content-hashed files under /assets: a new build gets new names. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The path pattern CloudFront sends to the HTTP API: its routes carry the prefix themselves (shared/routes.ts). */
export const API_PATH_PATTERN = `${API_PREFIX}/*`;


export interface DashboardProps {
  /** The HTTP API whose routes (all under `/api`) the distribution serves at `/api/*`. */
  api: HttpApi;
  /**
   * The secret CloudFront adds to every `/api` request as the origin header `x-burnrate-edge` (a dynamic reference:
   * the template holds no value), which proves to the functions that `CloudFront-Viewer-Address` came from us.
   */
  edgeSecret: ISecret;
  /**
   * The built app. @default web/dist. Without it a synth that deploys (bundling on) fails with the command that
   * builds it; a synth with bundling skipped (tests, `cdk ls`) uploads a placeholder page instead.
   */
  webDist?: string;
}

export class Dashboard extends Construct {
  /** The private bucket of the built app. */
  readonly bucket: Bucket;
  /** CloudFront's standard logs (prefix `cloudfront/`) and the app bucket's server access logs (prefix `s3/`). */
  readonly logBucket: Bucket;
  readonly distribution: Distribution;
  /** `https://<distribution domain>`: the default `dashboardUrl` (e-mailed links, Stripe's return URLs). */
  readonly url: string;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const stack = Stack.of(this);

    // Logs are records: kept like the table (RETAIN), expired after 90 days. CloudFront's standard logging writes
    // with an ACL, so this bucket keeps ACLs (object writer → bucket owner preferred); the app bucket does not.
    this.logBucket = new Bucket(this, 'Logs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.logBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'This is the access-log bucket (CloudFront logs and the app bucket\'s server access logs): logging its own ' +
        'accesses into itself would log the log writes, and a second log bucket would only move the finding.',
    });

    // Build output only (no user data), but RETAIN like the table: a stack deletion must not fail on a non-empty
    // bucket, and no auto-delete custom resource (another Lambda with s3:DeleteObject*) is worth it.
    this.bucket = new Bucket(this, 'App', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.logBucket,
      serverAccessLogsPrefix: 's3/',
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const spaRouting = new CloudFrontFunction(this, 'SpaRouting', {
      code: FunctionCode.fromFile({ filePath: SPA_ROUTING_FILE }),
      runtime: FunctionRuntime.JS_2_0,
      comment: 'Burnrate: app paths (no file extension) get index.html',
    });

    const securityHeaders = new ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'Burnrate: CSP, HSTS, nosniff, frame DENY, referrer and permissions policies',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: DASHBOARD_CSP, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption[FRAME_OPTIONS], override: true },
        // REFERRER_POLICY of shared/http/dashboard-headers.ts (a test holds the two equal).
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.STRICT_ORIGIN_WHEN_CROSS_ORIGIN, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(HSTS_MAX_AGE_SECONDS),
          includeSubdomains: true,
          override: true,
        },
      },
      customHeadersBehavior: { customHeaders: [{ header: 'Permissions-Policy', value: PERMISSIONS_POLICY, override: true }] },
    });

    // The API's own regional endpoint; its routes already start with /api, so no origin path. The edge secret as
    // an origin custom header (CloudFront replaces a viewer's header of that name): with it the functions believe
    // the CloudFront-Viewer-Address that the origin request policy below forwards (shared/http/client-ip.ts).
    const apiOrigin = new HttpOrigin(`${props.api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      originSslProtocols: [OriginSslPolicy.TLS_V1_2],
      customHeaders: { [EDGE_SECRET_HEADER]: props.edgeSecret.secretValue.unsafeUnwrap() },
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Burnrate dashboard and API (${stack.stackName})`,
      defaultRootObject: 'index.html',
      httpVersion: HttpVersion.HTTP2_AND_3,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'cloudfront/',
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        compress: true,
        responseHeadersPolicy: securityHeaders,
        functionAssociations: [{ function: spaRouting, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        // Nothing cached; every method; every viewer header but Host (API Gateway routes on its own host name),
        // query strings and cookies. With caching disabled this managed policy forwards Authorization too, and it
        // adds CloudFront's own headers, CloudFront-Viewer-Address among them (AllViewerAndCloudFrontHeaders-2022-06
        // would add it as well, but forwards the viewer's Host, which API Gateway's endpoint refuses).
        // HTTPS only, no redirect: a redirected POST would lose its body.
        [API_PATH_PATTERN]: {
          origin: apiOrigin,
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          responseHeadersPolicy: securityHeaders,
        },
      },
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'No geo restriction: the dashboard and the ingest API serve customers wherever they are; sign-in, ' +
        'per-route throttling and per-IP/e-mail limits guard the API instead.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR2',
      reason:
        'No WAF web ACL: a CloudFront web ACL must live in us-east-1 (this stack is regional) and costs a monthly fee ' +
        'per ACL and rule; the API has the stage throttle, the Cognito authorizer and per-IP limits. Attach one with ' +
        'the distribution\'s webAclId when the traffic warrants it.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR4',
      reason:
        'The distribution uses the default *.cloudfront.net certificate, whose minimum protocol version CloudFront ' +
        'fixes (TLSv1 is still offered to old clients); a custom domain with an ACM certificate would set TLSv1.2_2021.',
    });

    this.url = `https://${this.distribution.distributionDomainName}`;

    // The upload. Hashed files under /assets are immutable and never pruned (a page loaded before a deploy still
    // finds its chunks); every other file (index.html, favicon) is revalidated on each use (no-cache), so a deploy
    // needs no invalidation. The pages follow the assets, so a new index.html never names a missing file.
    const source = this.appSource(props.webDist);
    const logGroup = new LogGroup(this, 'DeployLogs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const assets = new BucketDeployment(this, 'DeployAssets', {
      sources: [source],
      destinationBucket: this.bucket,
      exclude: ['*'],
      include: ['assets/*'],
      prune: false,
      cacheControl: [CacheControl.fromString(IMMUTABLE)],
      logGroup,
    });
    const pages = new BucketDeployment(this, 'DeployPages', {
      sources: [source],
      destinationBucket: this.bucket,
      exclude: ['assets/*'],
      prune: true,
      cacheControl: [CacheControl.noCache()],
      logGroup,
    });
    pages.node.addDependency(assets);
    this.acknowledgeDeploymentHandler(assets);
  }

  /**
   * The given build, else web/dist when the synth deploys. With bundling skipped (tests, `cdk ls`) and no build
   * given, a placeholder page, as CDK does with the functions' code: such a synth never reads web/dist, which
   * `npm start` or another test may be rebuilding at that moment.
   */
  private appSource(webDist: string | undefined): ISource {
    if (webDist === undefined && !Stack.of(this).bundlingRequired) {
      return Source.data('index.html', '<!doctype html><title>Burnrate</title><p>Placeholder: synthesized without bundling.</p>');
    }
    const dir = webDist ?? WEB_DIST;
    if (!existsSync(join(dir, 'index.html'))) {
      throw new Error(`The dashboard is not built: ${join(dir, 'index.html')} is missing. Run \`npm run build:web\` first.`);
    }
    return Source.asset(dir);
  }

  /**
   * The findings of CDK's own upload function (one per stack, shared by both deployments), each by its exact id:
   * a new permission CDK adds to it fails the synth until reviewed here.
   */
  private acknowledgeDeploymentHandler(deployment: BucketDeployment): void {
    const stack = Stack.of(this);
    const role = deployment.handlerRole;
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        "CDK's BucketDeployment upload function (a custom resource that runs only during a deploy) has " +
        'AWSLambdaBasicExecutionRole for its logs; its role is built by CDK, not by our BurnrateFunction.',
    });
    const qualifier = String(this.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER);
    const appBucketArn = `<${stack.getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>/*`;
    for (const finding of [
      'Action::s3:GetObject*',
      'Action::s3:GetBucket*',
      'Action::s3:List*',
      'Action::s3:DeleteObject*',
      'Action::s3:Abort*',
      `Resource::arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-<AWS::AccountId>-<AWS::Region>/*`,
      `Resource::${appBucketArn}`,
    ]) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason:
          "CDK's BucketDeployment grants its upload function read on the CDK asset bucket's objects and read/write/" +
          'delete on the objects of the dashboard bucket (bucket/*): it syncs a whole folder, so it needs every key of ' +
          'that one bucket, and no other bucket.',
      });
    }
    const handler = stack.node.findAll().find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!handler) throw new Error('BucketDeployment: its upload function was not found');
    Validations.of(handler).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        "CDK's BucketDeployment upload function runs the Python runtime that aws-cdk-lib pins and tests with its " +
        'bundled AWS CLI layer; it is upgraded with aws-cdk-lib, not by us.',
    });
  }
}
