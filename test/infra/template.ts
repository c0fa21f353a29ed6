/** Helpers shared by the CDK tests: reading a synthesized template's resources and IAM statements. */
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The settings a deploy must give (infra/settings.ts), as `-c` context: e-mail and billing on. */
export const DEPLOY_CONTEXT = {
  sesIdentity: 'example.com',
  dashboardUrl: 'https://app.example.com',
  stripePriceGrowth: 'price_growth',
  stripePriceScale: 'price_scale',
} as const;

export interface Resource {
  Type: string;
  Properties?: Record<string, any>;
  [key: string]: unknown;
}

export interface Statement {
  Effect: string;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

export const props = (r: Resource): Record<string, any> => r.Properties ?? {};

export const asList = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The logical id in `{Ref: id}` or `{'Fn::GetAtt': [id, attr]}`. */
export function refId(value: unknown): string | undefined {
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return v.Ref;
    const getAtt = v['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  }
  return undefined;
}

/** Every IAM statement anywhere below `node` (policies, inline role policies, trust policies). */
export function statementsIn(node: unknown): Statement[] {
  if (Array.isArray(node)) return node.flatMap((n) => statementsIn(n));
  if (!node || typeof node !== 'object') return [];
  const found: Statement[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'Statement' && Array.isArray(value)) found.push(...(value as Statement[]));
    else found.push(...statementsIn(value));
  }
  return found;
}

/**
 * Every statement a role grants: its inline policies (`Policies` of the AWS::IAM::Role, where the functions' grants
 * live) and the AWS::IAM::Policy resources attached to it.
 */
export function roleStatements(json: Record<string, Resource>, roleId: string): Statement[] {
  const inline = statementsIn(props(json[roleId]!).Policies ?? []);
  const attached = Object.values(json)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && asList(props(r).Roles).some((x) => refId(x) === roleId))
    .flatMap((p) => statementsIn(props(p).PolicyDocument));
  return [...inline, ...attached];
}

/**
 * CDK's BucketDeployment upload function (infra/dashboard.ts: one per stack, the one Lambda function that is not
 * ours), its role and that role's policy, by logical id.
 */
export function deploymentRoleIds(json: Record<string, Resource>): { functionId: string; roleId: string; policyId: string } {
  const deployments = Object.values(json).filter((r) => r.Type === 'Custom::CDKBucketDeployment');
  const functionIds = [...new Set(deployments.map((d) => refId(props(d).ServiceToken)))];
  if (deployments.length === 0 || functionIds.length !== 1 || !functionIds[0]) throw new Error('expected BucketDeployments served by one function');
  const functionId = functionIds[0];
  const roleId = refId(props(json[functionId]!).Role)!;
  const policies = Object.entries(json).filter(([, r]) => r.Type === 'AWS::IAM::Policy' && asList(props(r).Roles).some((x) => refId(x) === roleId));
  if (policies.length !== 1) throw new Error(`expected one policy on the upload function's role, got ${policies.length}`);
  return { functionId, roleId, policyId: policies[0]![0] };
}
