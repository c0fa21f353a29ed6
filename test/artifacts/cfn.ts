/**
 * The synthesized template, read the way the artifact tests need it: our functions (their entry, environment and
 * execution-role statements) and CloudFormation's intrinsics resolved to the LOCAL stack's values — what the
 * deployed stack would hold, with DynamoDB Local's table, cognito-local's pool and the proxy's queue in place of
 * the AWS ones.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildApp } from '#infra/app.ts';
import { BurnrateFunction, PROJECT_ROOT } from '#infra/burnrate-function.ts';
import { NestedStack, Stack, type CfnResource } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { PolicyStatement } from './iam.ts';
import { kmsKeyId } from './kms.ts';
import { findSecret, type LocalSecret } from './proxy.ts';

export type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }>; Outputs?: Record<string, { Value: unknown }>; Parameters?: Record<string, unknown> };

/** What a `Ref` and each `Fn::GetAtt` attribute of one logical id stand for locally. */
export interface LocalResource {
  ref: string;
  attributes?: Record<string, string>;
}

export interface LocalValues {
  region: string;
  accountId: string;
  partition?: string;
  /** By logical id. A `Ref`/`Fn::GetAtt` of an id not here throws: no silent placeholder reaches a function. */
  resources: Record<string, LocalResource>;
  /** `{{resolve:secretsmanager:<arn>:SecretString:::}}` → the secret's local value. */
  secretValue?: (secretId: string) => string | undefined;
}

/** Resolves `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split` and dynamic references. */
export function resolve(value: unknown, local: LocalValues): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(v, local));
  if (typeof value === 'string') return resolveDynamicReferences(value, local);
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1) {
    const [key, arg] = entries[0]!;
    switch (key) {
      case 'Ref':
        return resolveDynamicReferences(ref(String(arg), local), local);
      case 'Fn::GetAtt': {
        const [id, attribute] = Array.isArray(arg) ? arg.map(String) : String(arg).split('.');
        const resource = local.resources[id!];
        const got = resource?.attributes?.[attribute!];
        if (got === undefined) throw new Error(`no local value for Fn::GetAtt ${id}.${attribute}`);
        return got;
      }
      case 'Fn::Join': {
        const [separator, parts] = arg as [string, unknown[]];
        return resolveDynamicReferences((resolve(parts, local) as unknown[]).map(String).join(separator), local);
      }
      case 'Fn::Sub': {
        const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [String(arg), {}];
        const resolvedVars = resolve(vars, local) as Record<string, unknown>;
        return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
          if (name in resolvedVars) return String(resolvedVars[name]);
          const [id, attribute] = name.split('.');
          return String(attribute ? resolve({ 'Fn::GetAtt': [id, attribute] }, local) : ref(name, local));
        });
      }
      case 'Fn::Select': {
        const [index, items] = arg as [number, unknown];
        return (resolve(items, local) as unknown[])[Number(index)];
      }
      case 'Fn::Split': {
        const [separator, text] = arg as [string, unknown];
        return String(resolve(text, local)).split(separator);
      }
      default:
        if (key.startsWith('Fn::') || key === 'Condition') throw new Error(`the artifact tests cannot resolve ${key}`);
    }
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolve(v, local)]));
}

function ref(id: string, local: LocalValues): string {
  switch (id) {
    case 'AWS::Region':
      return local.region;
    case 'AWS::AccountId':
      return local.accountId;
    case 'AWS::Partition':
      return local.partition ?? 'aws';
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
  }
  const resource = local.resources[id];
  if (!resource) throw new Error(`no local value for Ref ${id}`);
  return resource.ref;
}

/** CloudFormation's dynamic references to Secrets Manager, as the deploy resolves them. */
function resolveDynamicReferences(text: string, local: LocalValues): string {
  return text.replace(/\{\{resolve:secretsmanager:(.+?):SecretString:([^:}]*):([^:}]*):([^:}]*)\}\}/g, (whole, id: string, jsonKey: string) => {
    const secret = local.secretValue?.(id);
    if (secret === undefined) throw new Error(`no local value for the dynamic reference ${whole}`);
    return jsonKey ? String((JSON.parse(secret) as Record<string, unknown>)[jsonKey]) : secret;
  });
}

export interface ArtifactFunction {
  /** Logical id of its AWS::Lambda::Function. */
  logicalId: string;
  /** Handler module under functions/, without extension: `auth/register`. */
  name: string;
  /** Absolute entry file, and whether it is bundled with a source map (from the construct, as CDK bundles it). */
  entry: string;
  sourceMap: boolean;
  /** The route's `METHOD /path` (API prefix excluded), or undefined for the queue and schedule functions. */
  routeKey: string | undefined;
  /** `Environment.Variables` of the template, unresolved. */
  environment: Record<string, unknown>;
  /** Every statement of its execution role's policies (inline and AWS::IAM::Policy), unresolved. */
  statements: PolicyStatement[];
  memorySize: number;
  timeoutSeconds: number;
}

export interface SynthesizedApp {
  template: Template;
  /** Our functions: one per BurnrateFunction construct (CDK's own helper functions excluded). */
  functions: ArtifactFunction[];
  /** Lambda functions of the template that are not ours (custom-resource providers, BucketDeployment, …). */
  helperFunctions: string[];
}

/** Synthesizes the app (bundling skipped, as the infra tests do) with the given deploy settings. */
export function synthesize(context: Record<string, unknown>): SynthesizedApp {
  const outdir = mkdtempSync(join(tmpdir(), 'burnrate-artifacts-cdk-'));
  try {
    const { app, stack } = buildApp({ app: { context: { 'aws:cdk:bundling-stacks': [], ...context }, outdir } });
    const assembly = app.synth();
    const template = flattenNestedStacks(assembly.getStackByName(stack.stackName).template as Template, stack, assembly.directory);
    const ours = stack.node.findAll().filter((c): c is BurnrateFunction => c instanceof BurnrateFunction);
    const functions = ours.map((fn): ArtifactFunction => {
      const logicalId = Stack.of(fn).getLogicalId(fn.function.node.defaultChild as CfnFunction);
      const properties = template.Resources[logicalId]?.Properties;
      if (!properties) throw new Error(`${logicalId} is not in the template`);
      return {
        logicalId,
        name: relative(join(PROJECT_ROOT, 'functions'), fn.entry).replace(/\.ts$/, ''),
        entry: fn.entry,
        sourceMap: fn.sourceMap,
        routeKey: fn.route ? `${fn.route.method} ${fn.route.path}` : undefined,
        environment: (properties.Environment?.Variables ?? {}) as Record<string, unknown>,
        statements: roleStatements(template, properties.Role),
        memorySize: Number(properties.MemorySize ?? 128),
        timeoutSeconds: Number(properties.Timeout ?? 3),
      };
    });
    const ourIds = new Set(functions.map((f) => f.logicalId));
    const helperFunctions = Object.entries(template.Resources)
      .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !ourIds.has(id))
      .map(([id]) => id);
    return { template, functions, helperFunctions };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The stack's template with the resources of its nested stacks (infra/connector-limits.ts) in it, as if they were one
 * stack: in a nested resource, a `Ref` to one of its parameters becomes the value the parent passes; in the parent, a
 * `Fn::GetAtt` of a nested stack's output becomes that output's value. The AWS::CloudFormation::Stack resources go.
 * So every reader of the template (the artifact tests, the infra tests) sees every function, queue and grant.
 */
export function flattenNestedStacks(parent: Template, stack: Stack, assemblyDir: string): Template {
  const resources = { ...parent.Resources };
  const outputs = new Map<string, Map<string, unknown>>();
  for (const nested of stack.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack && Stack.of(c.node.scope!) === stack)) {
    const stackId = stack.getLogicalId(nested.nestedStackResource as CfnResource);
    const child = flattenNestedStacks(JSON.parse(readFileSync(join(assemblyDir, nested.templateFile), 'utf8')) as Template, nested, assemblyDir);
    const parameters = (parent.Resources[stackId]?.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const substitute = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(substitute);
      if (!value || typeof value !== 'object') return value;
      const ref = (value as { Ref?: unknown }).Ref;
      if (typeof ref === 'string' && Object.keys(value).length === 1 && ref in parameters) return parameters[ref];
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v)]));
    };
    for (const [id, resource] of Object.entries(child.Resources)) {
      if (id in resources) throw new Error(`${id} is in the stack and in its nested stack ${stackId}`);
      resources[id] = substitute(resource) as Template['Resources'][string];
    }
    outputs.set(stackId, new Map(Object.entries(child.Outputs ?? {}).map(([name, output]) => [`Outputs.${name}`, substitute(output.Value)])));
    delete resources[stackId];
  }
  const fromOutputs = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fromOutputs);
    if (!value || typeof value !== 'object') return value;
    const getAtt = (value as { 'Fn::GetAtt'?: unknown })['Fn::GetAtt'];
    if (Array.isArray(getAtt) && outputs.has(String(getAtt[0]))) {
      const got = outputs.get(String(getAtt[0]))!.get(String(getAtt[1]));
      if (got === undefined) throw new Error(`no output ${String(getAtt[1])} in the nested stack ${String(getAtt[0])}`);
      return got;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromOutputs(v)]));
  };
  return { ...parent, Resources: fromOutputs(resources) as Template['Resources'], ...(parent.Outputs ? { Outputs: fromOutputs(parent.Outputs) as Template['Outputs'] } : {}) };
}

/** The statements of the role a function's `Role` points at: its inline policies and the AWS::IAM::Policy resources on it. */
export function roleStatements(template: Template, roleArn: unknown): PolicyStatement[] {
  const roleId = (roleArn as { 'Fn::GetAtt'?: [string, string] })?.['Fn::GetAtt']?.[0];
  const role = roleId ? template.Resources[roleId] : undefined;
  if (!roleId || role?.Type !== 'AWS::IAM::Role') throw new Error(`the function's Role is not a role of this template: ${JSON.stringify(roleArn)}`);
  if (role.Properties?.ManagedPolicyArns?.length) throw new Error(`${roleId} has managed policies, which the artifact tests cannot read`);
  const documents: { Statement: PolicyStatement[] }[] = (role.Properties?.Policies ?? []).map((p: any) => p.PolicyDocument);
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = (resource.Properties?.Roles ?? []) as unknown[];
    if (roles.some((r) => (r as { Ref?: string })?.Ref === roleId)) documents.push(resource.Properties!.PolicyDocument);
  }
  return documents.flatMap((d) => d.Statement);
}

/** The statements with their intrinsics resolved (resources become ARN strings). */
export function resolveStatements(statements: readonly PolicyStatement[], local: LocalValues): PolicyStatement[] {
  return statements.map((s) => resolve(s, local) as PolicyStatement);
}

/** The environment with its intrinsics resolved. */
export function resolveEnvironment(environment: Record<string, unknown>, local: LocalValues): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, String(resolve(value, local))]));
}

export interface LocalStackValues {
  region: string;
  accountId: string;
  tableName: string;
  userPoolId: string;
  userPoolClientId: string;
  /** Queue URLs are `<sqsEndpoint>/<account>/<name>`: the SDK sends SQS calls to the queue URL's host. */
  sqsEndpoint: string;
  /** The value of each secret the template creates (by logical id); its ARN is made here. */
  templateSecrets: Record<string, string>;
  /** Secrets created outside the stack (the Stripe secret), looked up by name or ARN. */
  externalSecrets: readonly LocalSecret[];
}

/**
 * The local value of every resource our functions can reference: each type maps to what CloudFormation would
 * return (Ref, Arn, …), named after the logical id where the deploy would generate a name.
 */
export function localValues(template: Template, stack: LocalStackValues): LocalValues & { secrets: LocalSecret[]; kmsKeys: string[] } {
  const { region, accountId } = stack;
  const arn = (service: string, resource: string, accountAndRegion = true) =>
    `arn:aws:${service}:${accountAndRegion ? region : ''}:${accountAndRegion ? accountId : ''}:${resource}`;
  const resources: Record<string, LocalResource> = {};
  const secrets: LocalSecret[] = [...stack.externalSecrets];
  const tables = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::DynamoDB::Table');
  if (tables.length !== 1) throw new Error(`expected one table in the template, found ${tables.length}`);
  for (const [id, resource] of Object.entries(template.Resources)) {
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table':
        resources[id] = { ref: stack.tableName, attributes: { Arn: arn('dynamodb', `table/${stack.tableName}`) } };
        break;
      case 'AWS::Cognito::UserPool':
        resources[id] = { ref: stack.userPoolId, attributes: { Arn: arn('cognito-idp', `userpool/${stack.userPoolId}`) } };
        break;
      case 'AWS::Cognito::UserPoolClient':
        resources[id] = { ref: stack.userPoolClientId };
        break;
      case 'AWS::SQS::Queue': {
        const name = `burnrate-${id}`;
        const url = `${stack.sqsEndpoint}/${accountId}/${name}`;
        resources[id] = { ref: url, attributes: { Arn: arn('sqs', name), QueueName: name, QueueUrl: url } };
        break;
      }
      case 'AWS::S3::Bucket': {
        // Bucket names are lower case; ARNs of buckets name no region or account.
        const name = `burnrate-${id.toLowerCase()}`;
        resources[id] = { ref: name, attributes: { Arn: `arn:aws:s3:::${name}`, DomainName: `${name}.s3.amazonaws.com`, RegionalDomainName: `${name}.s3.${region}.amazonaws.com` } };
        break;
      }
      case 'AWS::SecretsManager::Secret': {
        const value = stack.templateSecrets[id];
        const secretArn = arn('secretsmanager', `secret:${id}-LoCaL1`);
        if (value !== undefined) secrets.push({ name: id, arn: secretArn, value });
        resources[id] = { ref: secretArn };
        break;
      }
      case 'AWS::Logs::LogGroup': {
        const name = `/aws/lambda/${id}`;
        resources[id] = { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
        break;
      }
      case 'AWS::Lambda::Function':
        resources[id] = { ref: id, attributes: { Arn: arn('lambda', `function:${id}`) } };
        break;
      case 'AWS::IAM::Role':
        resources[id] = { ref: id, attributes: { Arn: `arn:aws:iam::${accountId}:role/${id}` } };
        break;
      case 'AWS::KMS::Key': {
        // Ref is the key ID (a UUID), Arn its ARN; the KMS stand-in (test/artifacts/kms.ts) holds a key of that ARN.
        const keyId = kmsKeyId(id);
        resources[id] = { ref: keyId, attributes: { Arn: arn('kms', `key/${keyId}`), KeyId: keyId } };
        break;
      }
    }
  }
  const kmsKeys = Object.entries(template.Resources)
    .filter(([, r]) => r.Type === 'AWS::KMS::Key')
    .map(([id]) => resources[id]!.attributes!.Arn!);
  return { region, accountId, resources, secrets, kmsKeys, secretValue: (secretId) => findSecret(secrets, secretId)?.value };
}
