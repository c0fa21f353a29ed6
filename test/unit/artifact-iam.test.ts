/**
 * The artifact tests' IAM evaluator (test/artifacts/iam.ts) and the authorizations the recording proxy derives
 * from AWS requests (test/artifacts/proxy.ts): what each is trusted to decide in the artifact test.
 */
import { describe, expect, it } from 'vitest';
import { conditionsHold, evaluate, wildcardMatch, type PolicyStatement } from '../artifacts/iam.ts';
import { authorizationsFor, findSecret, nameRequest, type ProxyEnvironment } from '../artifacts/proxy.ts';

const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/burnrate';
const allow = (Action: string | string[], Resource: string | string[], Condition?: PolicyStatement['Condition']): PolicyStatement => ({
  Effect: 'Allow',
  Action,
  Resource,
  ...(Condition ? { Condition } : {}),
});

describe('wildcardMatch', () => {
  it('* spans any run, ? one character, everything else is literal', () => {
    expect(wildcardMatch('dynamodb:*', 'dynamodb:PutItem')).toBe(true);
    expect(wildcardMatch('arn:aws:secretsmanager:r:1:secret:burnrate/stripe-??????', 'arn:aws:secretsmanager:r:1:secret:burnrate/stripe-AbC123')).toBe(true);
    expect(wildcardMatch('arn:aws:secretsmanager:r:1:secret:burnrate/stripe-??????', 'arn:aws:secretsmanager:r:1:secret:burnrate/stripe-AbC12')).toBe(false);
    expect(wildcardMatch('a.b', 'axb')).toBe(false);
    expect(wildcardMatch('dynamodb:putitem', 'dynamodb:PutItem')).toBe(false);
    expect(wildcardMatch('dynamodb:putitem', 'dynamodb:PutItem', true)).toBe(true);
  });
});

describe('evaluate', () => {
  const policy = [allow(['dynamodb:GetItem', 'dynamodb:Query'], [TABLE, `${TABLE}/index/gsi1`])];

  it('an action outside the policy is denied (implicit deny), one inside is allowed', () => {
    expect(evaluate(policy, { action: 'dynamodb:GetItem', resource: TABLE }).allowed).toBe(true);
    expect(evaluate(policy, { action: 'dynamodb:PutItem', resource: TABLE })).toEqual({ allowed: false, reason: 'no statement allows it (implicit deny)' });
  });

  it('actions match case-insensitively and by wildcard; resources case-sensitively', () => {
    expect(evaluate([allow('DynamoDB:get*', TABLE)], { action: 'dynamodb:GetItem', resource: TABLE }).allowed).toBe(true);
    expect(evaluate([allow('dynamodb:GetItem', TABLE.toUpperCase())], { action: 'dynamodb:GetItem', resource: TABLE }).allowed).toBe(false);
  });

  it('the table ARN does not cover its indexes; an index ARN covers that index alone', () => {
    const tableOnly = [allow('dynamodb:Query', TABLE)];
    expect(evaluate(tableOnly, { action: 'dynamodb:Query', resource: `${TABLE}/index/gsi1` }).allowed).toBe(false);
    expect(evaluate(policy, { action: 'dynamodb:Query', resource: `${TABLE}/index/gsi1` }).allowed).toBe(true);
    expect(evaluate(policy, { action: 'dynamodb:Query', resource: `${TABLE}/index/gsi2` }).allowed).toBe(false);
  });

  it('an explicit Deny wins over any Allow', () => {
    const denied = evaluate([allow('dynamodb:*', '*'), { Sid: 'NoDeletes', Effect: 'Deny', Action: 'dynamodb:DeleteItem', Resource: '*' }], {
      action: 'dynamodb:DeleteItem',
      resource: TABLE,
    });
    expect(denied).toEqual({ allowed: false, reason: 'explicitly denied by NoDeletes' });
  });

  it('NotAction and NotResource exclude', () => {
    const all = [{ Effect: 'Allow', NotAction: 'dynamodb:DeleteItem', NotResource: `${TABLE}/index/*` }];
    expect(evaluate(all, { action: 'dynamodb:PutItem', resource: TABLE }).allowed).toBe(true);
    expect(evaluate(all, { action: 'dynamodb:DeleteItem', resource: TABLE }).allowed).toBe(false);
    expect(evaluate(all, { action: 'dynamodb:Query', resource: `${TABLE}/index/gsi1` }).allowed).toBe(false);
  });

  it('conditions: StringEquals on ses:FromAddress holds only for that sender; a missing key fails it', () => {
    const ses = [allow(['ses:SendEmail', 'ses:SendRawEmail'], 'arn:aws:ses:us-east-1:000000000000:identity/*', { StringEquals: { 'ses:FromAddress': 'alerts@example.com' } })];
    const request = (from?: string) => ({
      action: 'ses:SendEmail',
      resource: 'arn:aws:ses:us-east-1:000000000000:identity/example.com',
      ...(from ? { context: { 'ses:FromAddress': from } } : {}),
    });
    expect(evaluate(ses, request('alerts@example.com')).allowed).toBe(true);
    expect(evaluate(ses, request('ceo@example.com')).allowed).toBe(false);
    expect(evaluate(ses, request()).allowed).toBe(false);
  });

  it('conditions: key names are case-insensitive; StringLike, the negated operators and IfExists', () => {
    expect(conditionsHold({ StringEquals: { 'SES:FromAddress': 'a@x.com' } }, { 'ses:fromaddress': 'a@x.com' })).toBe(true);
    expect(conditionsHold({ StringLike: { 'ses:FromAddress': '*@x.com' } }, { 'ses:FromAddress': 'a@x.com' })).toBe(true);
    expect(conditionsHold({ StringLike: { 'ses:FromAddress': ['*@y.com', '*@x.com'] } }, { 'ses:FromAddress': 'a@x.com' })).toBe(true);
    expect(conditionsHold({ StringNotEquals: { 'ses:FromAddress': 'a@x.com' } }, { 'ses:FromAddress': 'a@x.com' })).toBe(false);
    expect(conditionsHold({ StringNotLike: { 'ses:FromAddress': '*@y.com' } }, {})).toBe(true);
    expect(conditionsHold({ StringEqualsIfExists: { 'kms:ViaService': 'secretsmanager.us-east-1.amazonaws.com' } }, {})).toBe(true);
    expect(conditionsHold({ StringEquals: { 'kms:ViaService': 'secretsmanager.us-east-1.amazonaws.com' } }, {})).toBe(false);
  });

  it('an operator it does not know is an error, never an allow', () => {
    expect(() => conditionsHold({ IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } }, {})).toThrow(/IpAddress is not supported/);
  });
});

describe('authorizationsFor: AWS requests as IAM authorizes them', () => {
  const env: ProxyEnvironment = {
    region: 'us-east-1',
    accountId: '000000000000',
    secrets: [{ name: 'burnrate/stripe', arn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:burnrate/stripe-AbC123', value: '{}' }],
    sesIdentities: ['example.com'],
  };

  it('TransactWriteItems: one item-level action per item, on its table', () => {
    const input = {
      TransactItems: [
        { Put: { TableName: 'burnrate', Item: {} } },
        { Update: { TableName: 'burnrate', Key: {} } },
        { Delete: { TableName: 'burnrate', Key: {} } },
        { ConditionCheck: { TableName: 'other', Key: {} } },
      ],
    };
    expect(authorizationsFor('dynamodb', 'TransactWriteItems', input, env)).toEqual([
      { action: 'dynamodb:PutItem', resource: TABLE },
      { action: 'dynamodb:UpdateItem', resource: TABLE },
      { action: 'dynamodb:DeleteItem', resource: TABLE },
      { action: 'dynamodb:ConditionCheckItem', resource: 'arn:aws:dynamodb:us-east-1:000000000000:table/other' },
    ]);
  });

  it('Query on an index: the index ARN; on the table: the table ARN; batch calls per table', () => {
    expect(authorizationsFor('dynamodb', 'Query', { TableName: 'burnrate', IndexName: 'gsi2' }, env)).toEqual([{ action: 'dynamodb:Query', resource: `${TABLE}/index/gsi2` }]);
    expect(authorizationsFor('dynamodb', 'Query', { TableName: 'burnrate' }, env)).toEqual([{ action: 'dynamodb:Query', resource: TABLE }]);
    expect(authorizationsFor('dynamodb', 'BatchGetItem', { RequestItems: { burnrate: {} } }, env)).toEqual([{ action: 'dynamodb:BatchGetItem', resource: TABLE }]);
  });

  it('SQS SendMessageBatch is sqs:SendMessage on the queue named by the URL', () => {
    expect(authorizationsFor('sqs', 'SendMessageBatch', { QueueUrl: 'http://127.0.0.1:9/000000000000/alerts', Entries: [] }, env)).toEqual([
      { action: 'sqs:SendMessage', resource: 'arn:aws:sqs:us-east-1:000000000000:alerts' },
    ]);
  });

  it('Secrets Manager: a partial ARN or a name is authorized as the full ARN', () => {
    const full = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:burnrate/stripe-AbC123';
    for (const id of ['burnrate/stripe', 'arn:aws:secretsmanager:us-east-1:000000000000:secret:burnrate/stripe', full]) {
      expect(authorizationsFor('secretsmanager', 'GetSecretValue', { SecretId: id }, env)).toEqual([{ action: 'secretsmanager:GetSecretValue', resource: full }]);
      expect(findSecret(env.secrets, id)?.arn).toBe(full);
    }
  });

  it('SES SendEmail: the sender identity and (sandbox) each recipient identity, with ses:FromAddress', () => {
    const got = authorizationsFor('ses', 'SendEmail', { FromEmailAddress: 'Burnrate <alerts@example.com>', Destination: { ToAddresses: ['ada@elsewhere.org'] } }, env);
    const context = { 'ses:FromAddress': 'alerts@example.com' };
    expect(got).toEqual([
      { action: 'ses:SendEmail', resource: 'arn:aws:ses:us-east-1:000000000000:identity/example.com', context },
      { action: 'ses:SendEmail', resource: 'arn:aws:ses:us-east-1:000000000000:identity/ada@elsewhere.org', context },
    ]);
  });

  it("Cognito: admin calls on the pool's ARN; the public operations need no IAM", () => {
    expect(authorizationsFor('cognito-idp', 'AdminCreateUser', { UserPoolId: 'local_abc' }, env)).toEqual([
      { action: 'cognito-idp:AdminCreateUser', resource: 'arn:aws:cognito-idp:us-east-1:000000000000:userpool/local_abc' },
    ]);
    expect(authorizationsFor('cognito-idp', 'InitiateAuth', { ClientId: 'x' }, env)).toBe('public');
  });

  it('names requests by X-Amz-Target, SES v2 by its path; anything else is unknown', () => {
    expect(nameRequest({ 'x-amz-target': 'DynamoDB_20120810.TransactWriteItems' }, 'POST', '/')).toEqual({ service: 'dynamodb', operation: 'TransactWriteItems' });
    expect(nameRequest({ 'x-amz-target': 'AmazonSQS.SendMessageBatch' }, 'POST', '/')).toEqual({ service: 'sqs', operation: 'SendMessageBatch' });
    expect(nameRequest({}, 'POST', '/v2/email/outbound-emails')).toEqual({ service: 'ses', operation: 'SendEmail' });
    expect(nameRequest({}, 'GET', '/latest/meta-data/').service).toBe('unknown');
  });
});
