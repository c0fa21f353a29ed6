/**
 * The artifact tests' IAM evaluator (test/artifacts/iam.ts) and the authorizations the recording proxy derives
 * from AWS requests (test/artifacts/proxy.ts): what each is trusted to decide in the artifact test.
 */
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kmsWrapper, openSecret, sealSecret } from '#shared/connections/secrets.ts';
import { conditionsHold, evaluate, wildcardMatch, type PolicyStatement } from '../artifacts/iam.ts';
import { kmsKeyId, localKms } from '../artifacts/kms.ts';
import { authorizationsFor, findSecret, nameRequest, startRecordingProxy, type ProxyEnvironment, type RecordingProxy } from '../artifacts/proxy.ts';

const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/burnrate';
const KEY_ARN = `arn:aws:kms:us-east-1:000000000000:key/${kmsKeyId('K')}`;
/** The condition infra puts on the connections key's grants (infra/burnrate-stack.ts). */
const ADMIN_KEY_CONTEXT = {
  'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['accountId', 'connectionId'] },
  StringLike: { 'kms:EncryptionContext:accountId': 'br_*', 'kms:EncryptionContext:connectionId': 'con_*' },
};
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

  it('set operators on a multi-valued key: ForAllValues (every value allowed; an empty set holds), ForAnyValue (one value)', () => {
    const only = { 'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['accountId', 'connectionId'] } };
    expect(conditionsHold(only, { 'kms:EncryptionContextKeys': ['connectionId', 'accountId'] })).toBe(true);
    expect(conditionsHold(only, { 'kms:EncryptionContextKeys': ['accountId', 'tenant'] })).toBe(false);
    // IAM's well-known gap: ForAllValues holds when the request has no such values (hence the StringLike beside it).
    expect(conditionsHold(only, { 'kms:EncryptionContextKeys': [] })).toBe(true);
    expect(conditionsHold(only, {})).toBe(true);
    const any = { 'ForAnyValue:StringLike': { 'kms:EncryptionContextKeys': 'conn*' } };
    expect(conditionsHold(any, { 'kms:EncryptionContextKeys': ['accountId', 'connectionId'] })).toBe(true);
    expect(conditionsHold(any, { 'kms:EncryptionContextKeys': ['accountId'] })).toBe(false);
    expect(conditionsHold(any, {})).toBe(false);
    expect(conditionsHold({ 'ForAllValues:StringNotEquals': { 'kms:EncryptionContextKeys': 'secret' } }, { 'kms:EncryptionContextKeys': ['a', 'b'] })).toBe(true);
    expect(conditionsHold({ 'ForAllValues:StringNotEquals': { 'kms:EncryptionContextKeys': 'secret' } }, { 'kms:EncryptionContextKeys': ['a', 'secret'] })).toBe(false);
  });

  it('a multi-valued key under a single-valued operator is an error, never a guess', () => {
    expect(() => conditionsHold({ StringEquals: { 'kms:EncryptionContextKeys': 'accountId' } }, { 'kms:EncryptionContextKeys': ['accountId'] })).toThrow(/ForAllValues/);
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

  it('KMS: the key named by KeyId or by the Decrypt blob, the encryption context as condition keys', () => {
    const kms = localKms([KEY_ARN]);
    const withKms = { ...env, kms };
    const context = { 'kms:EncryptionContextKeys': ['accountId', 'connectionId'], 'kms:EncryptionContext:accountId': 'br_1', 'kms:EncryptionContext:connectionId': 'con_1' };
    const EncryptionContext = { accountId: 'br_1', connectionId: 'con_1' };
    expect(authorizationsFor('kms', 'Encrypt', { KeyId: kmsKeyId('K'), Plaintext: 'AA==', EncryptionContext }, withKms)).toEqual([{ action: 'kms:Encrypt', resource: KEY_ARN, context }]);
    const sealed = kms.handle('Encrypt', { KeyId: KEY_ARN, Plaintext: 'AA==', EncryptionContext });
    expect(authorizationsFor('kms', 'Decrypt', { CiphertextBlob: sealed.body.CiphertextBlob, EncryptionContext }, withKms)).toEqual([{ action: 'kms:Decrypt', resource: KEY_ARN, context }]);
    // The connections key's grant (infra: ADMIN_KEY_CONTEXT) allows this context, and no other shape of context.
    const grant = [allow('kms:Decrypt', KEY_ARN, ADMIN_KEY_CONTEXT)];
    expect(evaluate(grant, { action: 'kms:Decrypt', resource: KEY_ARN, context }).allowed).toBe(true);
    const extra = authorizationsFor('kms', 'Decrypt', { CiphertextBlob: sealed.body.CiphertextBlob, EncryptionContext: { ...EncryptionContext, other: 'x' } }, withKms);
    expect(evaluate(grant, (extra as { action: string; resource: string }[])[0]!).allowed).toBe(false);
    expect(evaluate(grant, { action: 'kms:Decrypt', resource: KEY_ARN, context: { 'kms:EncryptionContextKeys': [] } }).allowed).toBe(false);
  });

  it('names requests by X-Amz-Target, SES v2 by its path; anything else is unknown', () => {
    expect(nameRequest({ 'x-amz-target': 'TrentService.Decrypt' }, 'POST', '/')).toEqual({ service: 'kms', operation: 'Decrypt' });
    expect(nameRequest({ 'x-amz-target': 'DynamoDB_20120810.TransactWriteItems' }, 'POST', '/')).toEqual({ service: 'dynamodb', operation: 'TransactWriteItems' });
    expect(nameRequest({ 'x-amz-target': 'AmazonSQS.SendMessageBatch' }, 'POST', '/')).toEqual({ service: 'sqs', operation: 'SendMessageBatch' });
    expect(nameRequest({}, 'POST', '/v2/email/outbound-emails')).toEqual({ service: 'ses', operation: 'SendEmail' });
    expect(nameRequest({}, 'GET', '/latest/meta-data/').service).toBe('unknown');
  });
});

describe('the KMS stand-in, over the wire with the AWS SDK (TrentService JSON 1.1)', () => {
  const ctx = { accountId: 'br_01ARTIFACT', connectionId: 'con_01ARTIFACT' };
  const kms = localKms([KEY_ARN]);
  let proxy: RecordingProxy;
  let client: KMSClient;
  beforeAll(async () => {
    proxy = await startRecordingProxy({
      region: 'us-east-1',
      accountId: '000000000000',
      secrets: [],
      sesIdentities: [],
      kms,
      statements: [allow(['kms:Encrypt', 'kms:Decrypt'], KEY_ARN, ADMIN_KEY_CONTEXT)],
      upstream: { dynamodb: 'http://127.0.0.1:9', 'cognito-idp': 'http://127.0.0.1:9' },
    });
    client = new KMSClient({ region: 'us-east-1', endpoint: proxy.url, credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test' } });
  });
  afterAll(async () => {
    client?.destroy();
    await proxy?.close();
  });
  const errorOf = (p: Promise<unknown>) => p.then(() => undefined, (e: { name?: string; $metadata?: { httpStatusCode?: number } }) => ({ name: e.name, status: e.$metadata?.httpStatusCode }));

  it('seals and opens an admin key through shared/connections/secrets.ts, only with the same encryption context', async () => {
    const wrapper = kmsWrapper(KEY_ARN, () => client);
    const sealed = await sealSecret('sk-admin-kms-roundtrip', ctx, wrapper);
    expect(sealed.wrap).toBe('kms');
    expect(await openSecret(sealed, ctx, wrapper)).toBe('sk-admin-kms-roundtrip');
    // Moved to another connection of another account: KMS refuses, as KMS does.
    expect(await errorOf(openSecret(sealed, { ...ctx, connectionId: 'con_01OTHER' }, wrapper))).toEqual({ name: 'InvalidCiphertextException', status: 400 });
    expect(await errorOf(openSecret(sealed, { accountId: 'br_01OTHER', connectionId: ctx.connectionId }, wrapper))).toEqual({ name: 'InvalidCiphertextException', status: 400 });
    const calls = proxy.calls.map((c) => `${c.operation} ${c.status} ${c.allowed}`);
    expect(calls).toEqual(['Encrypt 200 true', 'Decrypt 200 true', 'Decrypt 400 true', 'Decrypt 400 true']);
  });

  it('binds the context as a set of pairs (any order; case-sensitive), names its key, checks KeyId and the blob', async () => {
    // The proxy's IAM check (ADMIN_KEY_CONTEXT) allows no context `a`/`b`: the stand-in is called directly here.
    const sealed = kms.handle('Encrypt', { KeyId: kmsKeyId('K'), Plaintext: Buffer.from('data key').toString('base64'), EncryptionContext: { b: '2', a: '1' } });
    expect(sealed).toMatchObject({ status: 200, body: { KeyId: KEY_ARN, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' } });
    const blob = String(sealed.body.CiphertextBlob);
    const direct = (input: Record<string, unknown>) => kms.handle('Decrypt', { CiphertextBlob: blob, ...input });
    expect(direct({ EncryptionContext: { a: '1', b: '2' } })).toEqual({ status: 200, body: { KeyId: KEY_ARN, Plaintext: Buffer.from('data key').toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' } });
    expect(direct({ EncryptionContext: { a: '1', b: '2' }, KeyId: kmsKeyId('K') }).status).toBe(200);
    for (const EncryptionContext of [{ a: '1' }, { a: '1', b: '2', c: '3' }, { A: '1', b: '2' }, { a: '1', b: '3' }, undefined]) {
      expect(direct({ EncryptionContext }), JSON.stringify(EncryptionContext)).toEqual({ status: 400, body: { __type: 'InvalidCiphertextException', message: '' } });
    }
    const flipped = Buffer.from(blob, 'base64');
    flipped[flipped.length - 1]! ^= 1;
    expect(kms.handle('Decrypt', { CiphertextBlob: flipped.toString('base64'), EncryptionContext: { a: '1', b: '2' } }).body.__type).toBe('InvalidCiphertextException');
    expect(kms.handle('Decrypt', { CiphertextBlob: 'bm90IGEgYmxvYg==', EncryptionContext: { a: '1', b: '2' } }).body.__type).toBe('InvalidCiphertextException');
    const otherArn = KEY_ARN.replace(kmsKeyId('K'), kmsKeyId('L'));
    const other = localKms([otherArn, KEY_ARN]);
    expect(other.handle('Decrypt', { CiphertextBlob: blob, EncryptionContext: { a: '1', b: '2' }, KeyId: otherArn }).body.__type).toBe('IncorrectKeyException');
    // Another stand-in's key of the same ARN has other material: its ciphertext does not open here.
    expect(other.handle('Decrypt', { CiphertextBlob: blob, EncryptionContext: { a: '1', b: '2' } }).body.__type).toBe('InvalidCiphertextException');
    // Over the wire, errors are the SDK's typed exceptions.
    expect(await errorOf(client.send(new EncryptCommand({ KeyId: `${KEY_ARN}0`, Plaintext: Buffer.from('x'), EncryptionContext: ctx })))).toEqual({ name: 'AccessDeniedException', status: 400 });
    expect(kms.handle('Encrypt', { KeyId: 'alias/nope', Plaintext: 'AA==' }).body.__type).toBe('NotFoundException');
    expect(await errorOf(client.send(new DecryptCommand({ CiphertextBlob: Buffer.from(blob, 'base64'), EncryptionContext: ctx })))).toEqual({ name: 'InvalidCiphertextException', status: 400 });
  });

  it('refuses what IAM does not allow (AccessDeniedException) and operations it does not model', async () => {
    expect(await errorOf(client.send(new EncryptCommand({ KeyId: KEY_ARN, Plaintext: Buffer.from('x'), EncryptionContext: { tenant: 'x' } })))).toEqual({ name: 'AccessDeniedException', status: 400 });
    expect(kms.handle('GenerateDataKey', { KeyId: KEY_ARN, KeySpec: 'AES_256' }).body.__type).toBe('UnsupportedOperationException');
    expect(kms.handle('Encrypt', { KeyId: KEY_ARN, Plaintext: Buffer.alloc(4097).toString('base64') }).body.__type).toBe('ValidationException');
  });
});
