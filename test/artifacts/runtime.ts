/**
 * Runs the built artifacts against the local stack: per invocation a recording proxy with the function's IAM
 * statements, the function's template environment resolved to local values, and the endpoint overrides — nothing
 * else reaches the process.
 */
import { randomUUID } from 'node:crypto';
import { invokeArtifact, lambdaRuntimeEnvironment, pool, type Artifact, type Invocation } from './bundles.ts';
import { localValues, resolveEnvironment, resolveStatements, type LocalStackValues, type Template } from './cfn.ts';
import { localKms, type LocalKms } from './kms.ts';
import { startRecordingProxy, type AwsCall, type S3Object, type SentMessage } from './proxy.ts';
import type { PolicyStatement } from './iam.ts';

export interface Run {
  artifact: Artifact;
  event: unknown;
  /** The function's environment as it ran (template + runtime + overrides). */
  env: Record<string, string>;
  invocation: Invocation;
  calls: AwsCall[];
  messages: SentMessage[];
  emails: Record<string, any>[];
  /** What it stored in S3, by `<bucket>/<key>`. */
  objects: Map<string, S3Object>;
}

export interface RuntimeOptions {
  template: Template;
  artifacts: readonly Artifact[];
  stack: Omit<LocalStackValues, 'sqsEndpoint'>;
  upstream: { dynamodb: string; 'cognito-idp': string };
  sesIdentities: readonly string[];
  /**
   * Endpoints of non-AWS services, by the template variable that says a function uses them: e.g. functions with
   * `STRIPE_SECRET_ARN` get `STRIPE_API_BASE` (the Stripe SDK's host: the local stand-in, not api.stripe.com). A
   * function of the run's proxy URL for values that name it.
   */
  serviceEndpoints: { whenSet: string; env: Record<string, string> | ((proxyUrl: string) => Record<string, string>) }[];
  /** Processes at a time. */
  concurrency: number;
}

export interface ArtifactRuntime {
  invoke(name: string, event: unknown): Promise<Run>;
  /** A function's execution-role statements, resolved (what its calls, and the URLs it signs, are checked against). */
  statements(name: string): PolicyStatement[];
  runs: Run[];
  /** The KMS stand-in every run's proxy shares (what one function seals, another may open). */
  kms: LocalKms;
}

export function artifactRuntime(options: RuntimeOptions): ArtifactRuntime {
  const runs: Run[] = [];
  const limit = pool(options.concurrency);
  const byName = new Map(options.artifacts.map((a) => [a.fn.name, a]));
  const local = (sqsEndpoint: string) => localValues(options.template, { ...options.stack, sqsEndpoint });
  const kms = localKms(local('http://unused').kmsKeys);
  // Policy resources are ARNs, which do not depend on the proxy's address.
  const statements = new Map<string, PolicyStatement[]>(
    options.artifacts.map((a) => [a.fn.name, resolveStatements(a.fn.statements, local('http://unused'))]),
  );

  async function invoke(name: string, event: unknown): Promise<Run> {
    const artifact = byName.get(name);
    if (!artifact) throw new Error(`no artifact for functions/${name}`);
    return limit(async () => {
      const values = local('http://pending');
      const proxy = await startRecordingProxy({
        region: options.stack.region,
        accountId: options.stack.accountId,
        secrets: values.secrets,
        sesIdentities: options.sesIdentities,
        kms,
        statements: statements.get(name)!,
        upstream: options.upstream,
      });
      try {
        const template = resolveEnvironment(artifact.fn.environment, local(proxy.url));
        const extra = options.serviceEndpoints.filter((s) => s.whenSet in template).map((s) => (typeof s.env === 'function' ? s.env(proxy.url) : s.env));
        const env = {
          ...lambdaRuntimeEnvironment(artifact.fn, artifact.dir, options.stack.region),
          ...template,
          // Every AWS SDK client of the bundle to the proxy (the SDK's own setting: no product code reads it).
          AWS_ENDPOINT_URL: proxy.url,
          ...Object.assign({}, ...extra),
        };
        const invocation = await invokeArtifact(artifact, env, event, randomUUID());
        const run: Run = { artifact, event, env, invocation, calls: proxy.calls, messages: proxy.messages, emails: proxy.emails, objects: proxy.objects };
        runs.push(run);
        return run;
      } finally {
        await proxy.close();
      }
    });
  }

  return {
    invoke,
    runs,
    kms,
    statements: (name) => {
      const found = statements.get(name);
      if (!found) throw new Error(`no artifact for functions/${name}`);
      return found;
    },
  };
}

/**
 * Why a run is broken, or nothing: the module failed or the handler threw, the process crashed, a call was denied
 * or unknown, or it logged an error (the logger's ERROR/CRITICAL lines, anything on stderr but Node's own warnings).
 */
export function problemsOf(run: Run): string[] {
  const problems: string[] = [];
  const { invocation } = run;
  if (!invocation.ok) problems.push(`threw: ${invocation.error?.stack ?? invocation.error?.message}`);
  if (invocation.exitCode !== 0) problems.push(`exit code ${invocation.exitCode}`);
  for (const call of run.calls) {
    if (call.service === 'unknown') problems.push(`unexpected request: ${call.operation}`);
    for (const a of call.authorizations.filter((x) => !x.allowed)) problems.push(`DENIED ${call.service} ${call.operation}: ${a.action} on ${a.resource} (${a.reason})`);
  }
  // The logger writes JSON lines (INFO to stdout, WARN and ERROR to stderr): errors fail, and so does a warning
  // about missing configuration; any other stderr output (a crash, console.error) fails too.
  for (const line of `${invocation.stdout}\n${withoutRuntimeNotices(invocation.stderr)}`.split('\n')) {
    if (!line.trim()) continue;
    const log = parseLogLine(line);
    if (!log) {
      if (invocation.stderr.includes(line)) problems.push(`stderr: ${line}`);
    } else if (/^(ERROR|CRITICAL|FATAL)$/i.test(log.level) || (/^WARN/i.test(log.level) && MISSING_CONFIG.test(line))) {
      problems.push(`logged: ${line}`);
    }
  }
  return problems;
}

/** A warning that says configuration is missing (e.g. "no alert queue configured"). */
const MISSING_CONFIG = /not configured|no \w+ configured|is not set|missing|undefined/i;

function parseLogLine(line: string): { level: string } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(line) as { level?: unknown };
    return typeof parsed.level === 'string' ? { level: parsed.level } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * stderr without the one notice that comes from running here on Node 20 rather than Lambda's Node 22: the AWS SDK's
 * NodeVersionSupportWarning (a multi-line process warning, and Node's "--trace-warnings" hint after it).
 */
function withoutRuntimeNotices(stderr: string): string {
  return stderr
    .replace(/\(node:\d+\) Warning: NodeVersionSupportWarning:[\s\S]*?More information can be found at: \S+\n?/g, '')
    .replace(/^\(Use `node --trace-warnings \.\.\.` to show where the warning was created\)\n?/gm, '');
}
