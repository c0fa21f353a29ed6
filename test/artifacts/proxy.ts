/**
 * The recording proxy of the artifact tests: ONE function's AWS endpoint (`AWS_ENDPOINT_URL`). Each request is
 * named (service, operation), turned into the authorizations IAM would make for it (a TransactWriteItems into one
 * per item, a Query on an index into the index's ARN, SendMessageBatch into sqs:SendMessage on the queue, SES
 * SendEmail into the sender's and, as in the SES sandbox, each recipient's identity with `ses:FromAddress`), and
 * checked against the function's resolved IAM statements. A denied call is answered as AWS would
 * (AccessDeniedException) and recorded; an allowed one goes on to the local stack: DynamoDB Local and cognito-local
 * behind us, and small stand-ins here for what the local stack runs in-process or not at all (SQS, SES, Secrets
 * Manager, S3's object writes: PutObject and the multipart upload, kept in memory per run; KMS's Encrypt and Decrypt,
 * test/artifacts/kms.ts, with keys that outlive one run so a function can open what another sealed).
 */
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { evaluate, type AuthorizationRequest, type Decision, type PolicyStatement } from './iam.ts';
import type { LocalKms } from './kms.ts';

/** A secret of the local stand-in for Secrets Manager. */
export interface LocalSecret {
  name: string;
  /** Its full ARN (`…:secret:<name>-AbCdEf`). */
  arn: string;
  value: string;
}

/** Finds a secret by name, full ARN or partial ARN (without the 6-character suffix), as Secrets Manager does. */
export function findSecret(secrets: readonly LocalSecret[], secretId: string): LocalSecret | undefined {
  return secrets.find((s) => secretId === s.name || secretId === s.arn || s.arn === `${secretId}-${s.arn.slice(-6)}`);
}

export type Service = 'dynamodb' | 'cognito-idp' | 'sqs' | 'ses' | 'secretsmanager' | 's3' | 'kms';

/** One AWS request a function made. */
export interface AwsCall {
  service: Service | 'unknown';
  operation: string;
  /** Whether it carried a SigV4 signature (Cognito's public operations do not). */
  signed: boolean;
  /** The IAM authorizations it needs ([] for a public operation) and their decisions. */
  authorizations: (AuthorizationRequest & Decision)[];
  /** All of them allowed (a public operation counts as allowed). */
  allowed: boolean;
  /** The answer's HTTP status. */
  status: number;
  /** The request body, parsed (JSON protocols) — for assertions on what was sent. */
  input: Record<string, any>;
  /** The answer's body, for the calls a stand-in here answered with JSON (KMS, SQS, Secrets Manager, SES). */
  output?: Record<string, any>;
}

export interface ProxyEnvironment {
  region: string;
  accountId: string;
  secrets: readonly LocalSecret[];
  /** Verified SES identities (domains or addresses) of the account. */
  sesIdentities: readonly string[];
  /** The KMS stand-in and its keys (the template's AWS::KMS::Key resources). */
  kms?: LocalKms;
}

/** Cognito operations a caller makes without AWS credentials (no IAM authorization: public by design). */
const COGNITO_PUBLIC = new Set([
  'InitiateAuth',
  'RespondToAuthChallenge',
  'SignUp',
  'ConfirmSignUp',
  'ForgotPassword',
  'ConfirmForgotPassword',
  'ResendConfirmationCode',
  'ChangePassword',
  'GlobalSignOut',
  'RevokeToken',
  'GetUser',
  'UpdateUserAttributes',
  'DeleteUser',
  'GetTokensFromRefreshToken',
]);

/**
 * Cognito operations cognito-local does not implement, answered here (after the IAM check) as Cognito answers them.
 * AdminUserGlobalSignOut: cognito-local keeps no refresh-token revocation; the call's shape and grant are what count.
 */
const COGNITO_LOCAL_GAPS: Record<string, unknown> = { AdminUserGlobalSignOut: {} };

/** SQS batch operations are authorized as their single-message action. */
const SQS_ACTION: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

/** S3 object operations and the IAM action each is authorized as. */
const S3_ACTION: Record<string, string> = {
  PutObject: 'PutObject',
  CreateMultipartUpload: 'PutObject',
  UploadPart: 'PutObject',
  CompleteMultipartUpload: 'PutObject',
  AbortMultipartUpload: 'AbortMultipartUpload',
  GetObject: 'GetObject',
};

/** An S3 REST request (path-style: `/<bucket>/<key>`), named by its method and query. */
function nameS3(method: string, path: string): { operation: string; input: Record<string, any> } {
  const url = new URL(path, 'http://s3');
  const [bucket = '', ...key] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const q = url.searchParams;
  const operation =
    method === 'PUT' && q.has('uploadId') ? 'UploadPart'
    : method === 'PUT' ? 'PutObject'
    : method === 'POST' && q.has('uploads') ? 'CreateMultipartUpload'
    : method === 'POST' && q.has('uploadId') ? 'CompleteMultipartUpload'
    : method === 'DELETE' && q.has('uploadId') ? 'AbortMultipartUpload'
    : method === 'GET' ? 'GetObject'
    : `${method} ${url.pathname}${url.search}`;
  return { operation, input: { Bucket: bucket, Key: key.join('/'), UploadId: q.get('uploadId') ?? undefined, PartNumber: q.get('partNumber') ?? undefined } };
}

/** The payload of an `aws-chunked` body (`<hex size>[;chunk-signature=…]\r\n<bytes>\r\n … 0\r\n<trailers>`). */
export function decodeAwsChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) throw new Error('aws-chunked body without a chunk header');
    const size = Number.parseInt(body.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16);
    if (!Number.isFinite(size)) throw new Error('aws-chunked body with a bad chunk size');
    if (size === 0) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

const TRANSACT_WRITE_ACTION: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/** `Name <a@b>` or `a@b` → `a@b`. */
const bareAddress = (from: string) => (/<([^<>\s]+)>\s*$/.exec(from)?.[1] ?? from).trim();

/**
 * The authorizations IAM makes for one request, or `public` for an operation that needs none. Throws for a
 * request it cannot name (the test then fails on an unexpected call, never lets it through).
 */
export function authorizationsFor(
  service: Service,
  operation: string,
  input: Record<string, any>,
  env: ProxyEnvironment,
): AuthorizationRequest[] | 'public' {
  const arn = (svc: string, resource: string) => `arn:aws:${svc}:${env.region}:${env.accountId}:${resource}`;
  switch (service) {
    case 'dynamodb': {
      const table = (name: string) => (name.startsWith('arn:') ? name : arn('dynamodb', `table/${name}`));
      const action = (name: string) => `dynamodb:${name}`;
      switch (operation) {
        case 'TransactWriteItems':
          // Authorized per item, as its item-level action (the AWS docs: "TransactWriteItems" needs no action of its own).
          return (input.TransactItems as Record<string, { TableName: string }>[]).map((item) => {
            const [kind, detail] = Object.entries(item)[0]!;
            const itemAction = TRANSACT_WRITE_ACTION[kind];
            if (!itemAction) throw new Error(`unknown TransactWriteItems action ${kind}`);
            return { action: action(itemAction), resource: table(detail.TableName) };
          });
        case 'TransactGetItems':
          return (input.TransactItems as { Get: { TableName: string } }[]).map((item) => ({ action: action('GetItem'), resource: table(item.Get.TableName) }));
        case 'BatchGetItem':
        case 'BatchWriteItem':
          return Object.keys(input.RequestItems as object).map((name) => ({ action: action(operation), resource: table(name) }));
        case 'Query':
        case 'Scan':
          return [{ action: action(operation), resource: input.IndexName ? `${table(input.TableName)}/index/${input.IndexName}` : table(input.TableName) }];
        default:
          if (typeof input.TableName !== 'string') throw new Error(`DynamoDB ${operation} without a TableName`);
          return [{ action: action(operation), resource: table(input.TableName) }];
      }
    }
    case 'cognito-idp':
      if (COGNITO_PUBLIC.has(operation)) return 'public';
      if (typeof input.UserPoolId !== 'string') throw new Error(`cognito-idp ${operation} without a UserPoolId`);
      return [{ action: `cognito-idp:${operation}`, resource: arn('cognito-idp', `userpool/${input.UserPoolId}`) }];
    case 'sqs': {
      const url = new URL(String(input.QueueUrl));
      const [account, name] = url.pathname.split('/').filter(Boolean);
      return [{ action: `sqs:${SQS_ACTION[operation] ?? operation}`, resource: `arn:aws:sqs:${env.region}:${account}:${name}` }];
    }
    case 'secretsmanager': {
      const secretId = String(input.SecretId);
      const secret = findSecret(env.secrets, secretId);
      return [{ action: `secretsmanager:${operation}`, resource: secret?.arn ?? secretId }];
    }
    case 'kms': {
      // Authorized on the key the request acts on (KeyId, or the key a Decrypt blob names), with the encryption
      // context as condition keys: kms:EncryptionContextKeys (multi-valued) and kms:EncryptionContext:<key> each.
      const keyArn = env.kms?.keyOf(operation, input) ?? (typeof input.KeyId === 'string' && input.KeyId.startsWith('arn:') ? input.KeyId : arn('kms', `key/${input.KeyId ?? 'unknown'}`));
      const encryptionContext = (input.EncryptionContext ?? {}) as Record<string, string>;
      const context: Record<string, string | string[]> = { 'kms:EncryptionContextKeys': Object.keys(encryptionContext) };
      for (const [key, value] of Object.entries(encryptionContext)) context[`kms:EncryptionContext:${key}`] = String(value);
      return [{ action: `kms:${operation}`, resource: keyArn, context }];
    }
    case 's3': {
      // The multipart upload's steps are all authorized as s3:PutObject on the object (the S3 docs' action table).
      const action = S3_ACTION[operation];
      if (!action) throw new Error(`S3 ${operation} is not modelled`);
      return [{ action: `s3:${action}`, resource: `arn:aws:s3:::${input.Bucket}/${input.Key}` }];
    }
    case 'ses': {
      if (operation !== 'SendEmail') throw new Error(`SES ${operation} is not modelled`);
      const from = bareAddress(String(input.FromEmailAddress ?? ''));
      const identityOf = (address: string) => {
        const lower = address.toLowerCase();
        return env.sesIdentities.find((i) => i.toLowerCase() === lower) ?? env.sesIdentities.find((i) => lower.endsWith(`@${i.toLowerCase()}`)) ?? address;
      };
      const destination = (input.Destination ?? {}) as Record<string, string[] | undefined>;
      const recipients = [...(destination.ToAddresses ?? []), ...(destination.CcAddresses ?? []), ...(destination.BccAddresses ?? [])].map(bareAddress);
      const context = { 'ses:FromAddress': from };
      // The sender's identity, and (the SES sandbox of every new account) each recipient's.
      const identities = [identityOf(from), ...recipients.map(identityOf)];
      return [...new Set(identities)].map((identity) => ({ action: 'ses:SendEmail', resource: arn('ses', `identity/${identity}`), context }));
    }
  }
}

/** The service and operation of a request, from its X-Amz-Target (JSON protocols) or its path (SES v2, REST). */
export function nameRequest(headers: IncomingMessage['headers'], method: string, path: string): { service: Service | 'unknown'; operation: string } {
  const target = String(headers['x-amz-target'] ?? '');
  const [prefix, operation = ''] = target.split('.');
  const byPrefix: Record<string, Service> = {
    DynamoDB_20120810: 'dynamodb',
    AWSCognitoIdentityProviderService: 'cognito-idp',
    AmazonSQS: 'sqs',
    secretsmanager: 'secretsmanager',
    TrentService: 'kms',
  };
  if (prefix && byPrefix[prefix]) return { service: byPrefix[prefix], operation };
  if (method === 'POST' && path.split('?')[0] === '/v2/email/outbound-emails') return { service: 'ses', operation: 'SendEmail' };
  // S3 has no target header: its SigV4 credential scope names it (`…/us-east-1/s3/aws4_request`).
  if (/\/s3\/aws4_request/.test(String(headers.authorization ?? ''))) return { service: 's3', operation: nameS3(method, path).operation };
  return { service: 'unknown', operation: `${method} ${path}${target ? ` (${target})` : ''}` };
}

export interface ProxyOptions extends ProxyEnvironment {
  /** The function's execution-role statements, resolved. */
  statements: readonly PolicyStatement[];
  /** Where allowed calls go: DynamoDB Local and cognito-local. */
  upstream: { dynamodb: string; 'cognito-idp': string };
}

export interface SentMessage {
  queueUrl: string;
  messageId: string;
  body: string;
  md5OfBody: string;
  /** A FIFO queue's message group and deduplication id, as sent. */
  groupId?: string;
  deduplicationId?: string;
}

export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: the function's AWS_ENDPOINT_URL. */
  url: string;
  calls: AwsCall[];
  /** What SendMessage/SendMessageBatch put on queues. */
  messages: SentMessage[];
  /** What SES SendEmail sent. */
  emails: Record<string, any>[];
  /** What S3 stored (PutObject, or a completed multipart upload), by `<bucket>/<key>`. */
  objects: Map<string, S3Object>;
  close(): Promise<void>;
}

export interface S3Object {
  body: Buffer;
  headers: Record<string, string>;
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

export async function startRecordingProxy(options: ProxyOptions): Promise<RecordingProxy> {
  const calls: AwsCall[] = [];
  const messages: SentMessage[] = [];
  const emails: Record<string, any>[] = [];
  const objects = new Map<string, S3Object>();
  const uploads = new Map<string, { key: string; headers: Record<string, string>; parts: Map<number, Buffer> }>();

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A proxy failure shows as a 500 the function sees, and as a call recorded as not allowed.
      calls.push({ service: 'unknown', operation: `proxy error: ${String(error)}`, signed: false, authorizations: [], allowed: false, status: 500, input: {} });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ __type: 'InternalFailure', message: String(error) }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const { service, operation } = nameRequest(req.headers, method, path);
    const signed = /^AWS4-HMAC-SHA256 /.test(String(req.headers.authorization ?? ''));
    let input: Record<string, any> = {};
    if (service === 's3') input = nameS3(method, path).input;
    else {
      try {
        input = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, any>) : {};
      } catch {
        input = { raw: body.toString('utf8') };
      }
    }
    const call: AwsCall = { service, operation, signed, authorizations: [], allowed: false, status: 0, input };
    calls.push(call);
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      if (service === 's3') {
        // REST-XML: a document (or nothing), errors as <Error><Code>…</Code></Error>.
        const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(typeof payload === 'string' ? payload : '', 'utf8');
        res.writeHead(status, { 'content-type': 'application/xml', 'x-amz-request-id': randomUUID(), 'content-length': String(bytes.length), ...headers });
        res.end(bytes);
        return;
      }
      const contentType = service === 'ses' ? 'application/json' : `application/x-amz-json-${service === 'secretsmanager' || service === 'cognito-idp' || service === 'kms' ? '1.1' : '1.0'}`;
      if (payload && typeof payload === 'object') call.output = payload as Record<string, any>;
      res.writeHead(status, { 'content-type': contentType, 'x-amzn-requestid': randomUUID(), ...headers });
      res.end(JSON.stringify(payload));
    };

    if (service === 'unknown') return reply(400, { __type: 'UnknownOperationException', message: `the artifact proxy does not know ${operation}` });
    const needed = authorizationsFor(service, operation, input, options);
    if (needed !== 'public' && !signed) {
      call.authorizations = needed.map((a) => ({ ...a, allowed: false, reason: 'the request was not signed' }));
      return reply(400, { __type: 'MissingAuthenticationTokenException', message: 'Request is missing Authentication Token' });
    }
    call.authorizations = needed === 'public' ? [] : needed.map((a) => ({ ...a, ...evaluate(options.statements, a) }));
    call.allowed = call.authorizations.every((a) => a.allowed);
    if (!call.allowed) {
      const denied = call.authorizations.find((a) => !a.allowed)!;
      const message = `User: arn:aws:sts::${options.accountId}:assumed-role/function is not authorized to perform: ${denied.action} on resource: ${denied.resource} because no identity-based policy allows the ${denied.action} action`;
      if (service === 's3') return reply(403, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`);
      return reply(service === 'ses' ? 403 : 400, { __type: 'AccessDeniedException', message }, { 'x-amzn-errortype': 'AccessDeniedException' });
    }

    switch (service) {
      case 'cognito-idp':
        if (operation in COGNITO_LOCAL_GAPS) return reply(200, COGNITO_LOCAL_GAPS[operation]);
        return forward(options.upstream[service], req, body, res, call);
      case 'dynamodb':
        return forward(options.upstream[service], req, body, res, call);
      case 'sqs': {
        const entries: { Id?: string; MessageBody: string; MessageGroupId?: string; MessageDeduplicationId?: string }[] =
          operation === 'SendMessageBatch' ? input.Entries : [{ MessageBody: input.MessageBody, MessageGroupId: input.MessageGroupId, MessageDeduplicationId: input.MessageDeduplicationId }];
        if (operation !== 'SendMessageBatch' && operation !== 'SendMessage') return reply(400, { __type: 'UnsupportedOperation', message: `SQS ${operation} is not stood in for` });
        const sent = entries.map((e) => ({
          id: e.Id,
          message: {
            queueUrl: String(input.QueueUrl),
            messageId: randomUUID(),
            body: e.MessageBody,
            md5OfBody: md5(e.MessageBody),
            ...(e.MessageGroupId === undefined ? {} : { groupId: e.MessageGroupId }),
            ...(e.MessageDeduplicationId === undefined ? {} : { deduplicationId: e.MessageDeduplicationId }),
          },
        }));
        messages.push(...sent.map((s) => s.message));
        if (operation === 'SendMessage') return reply(200, { MessageId: sent[0]!.message.messageId, MD5OfMessageBody: sent[0]!.message.md5OfBody });
        return reply(200, { Successful: sent.map((s) => ({ Id: s.id, MessageId: s.message.messageId, MD5OfMessageBody: s.message.md5OfBody })), Failed: [] });
      }
      case 's3':
        return s3(operation, input, body, req.headers, reply);
      case 'kms': {
        if (!options.kms) return reply(400, { __type: 'UnsupportedOperationException', message: 'no KMS keys in this stack' });
        const answer = options.kms.handle(operation, input);
        return reply(answer.status, answer.body, answer.status === 200 ? {} : { 'x-amzn-errortype': answer.body.__type as string });
      }
      case 'secretsmanager': {
        const secret = findSecret(options.secrets, String(input.SecretId));
        if (operation !== 'GetSecretValue') return reply(400, { __type: 'UnsupportedOperation', message: `Secrets Manager ${operation} is not stood in for` });
        if (!secret) return reply(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
        return reply(200, { ARN: secret.arn, Name: secret.name, SecretString: secret.value, VersionId: 'local-1', VersionStages: ['AWSCURRENT'], CreatedDate: 1_700_000_000 });
      }
      case 'ses': {
        const unverified = [bareAddress(String(input.FromEmailAddress ?? ''))].filter(
          (from) => !options.sesIdentities.some((i) => i.toLowerCase() === from.toLowerCase() || from.toLowerCase().endsWith(`@${i.toLowerCase()}`)),
        );
        if (unverified.length > 0) {
          return reply(400, { message: `Email address is not verified. The following identities failed the check: ${unverified.join(', ')}` }, { 'x-amzn-errortype': 'MessageRejected' });
        }
        emails.push(input);
        return reply(200, { MessageId: randomUUID() });
      }
    }
  }

  /** The S3 stand-in: object writes kept in `objects`, the multipart upload by upload id. */
  function s3(operation: string, input: Record<string, any>, raw: Buffer, headers: IncomingMessage['headers'], reply: (status: number, payload: unknown, headers?: Record<string, string>) => void): void {
    const key = `${input.Bucket}/${input.Key}`;
    const payload = String(headers['content-encoding'] ?? '').includes('aws-chunked') ? decodeAwsChunked(raw) : raw;
    const etag = `"${createHash('md5').update(payload).digest('hex')}"`;
    const kept = (names: string[]) => Object.fromEntries(names.filter((n) => headers[n] !== undefined).map((n) => [n, String(headers[n])]));
    const objectHeaders = () => kept(['content-type', 'content-disposition', 'content-encoding']);
    const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`;
    switch (operation) {
      case 'PutObject':
        objects.set(key, { body: payload, headers: objectHeaders() });
        return reply(200, '', { etag });
      case 'CreateMultipartUpload': {
        const uploadId = randomUUID();
        uploads.set(uploadId, { key, headers: objectHeaders(), parts: new Map() });
        return reply(200, xml(`<InitiateMultipartUploadResult><Bucket>${input.Bucket}</Bucket><Key>${input.Key}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`));
      }
      case 'UploadPart': {
        const upload = uploads.get(String(input.UploadId));
        if (!upload) return reply(404, xml('<Error><Code>NoSuchUpload</Code></Error>'));
        upload.parts.set(Number(input.PartNumber), payload);
        return reply(200, '', { etag });
      }
      case 'CompleteMultipartUpload': {
        const upload = uploads.get(String(input.UploadId));
        if (!upload) return reply(404, xml('<Error><Code>NoSuchUpload</Code></Error>'));
        const parts = [...upload.parts].sort(([a], [b]) => a - b).map(([, part]) => part);
        objects.set(upload.key, { body: Buffer.concat(parts), headers: upload.headers });
        uploads.delete(String(input.UploadId));
        return reply(200, xml(`<CompleteMultipartUploadResult><Bucket>${input.Bucket}</Bucket><Key>${input.Key}</Key><ETag>${etag}</ETag></CompleteMultipartUploadResult>`));
      }
      case 'AbortMultipartUpload':
        uploads.delete(String(input.UploadId));
        return reply(204, '');
      case 'GetObject': {
        const object = objects.get(key);
        if (!object) return reply(404, xml('<Error><Code>NoSuchKey</Code></Error>'));
        return reply(200, object.body, object.headers);
      }
      default:
        return reply(400, xml(`<Error><Code>NotImplemented</Code><Message>S3 ${operation} is not stood in for</Message></Error>`));
    }
  }

  function forward(upstream: string, req: IncomingMessage, body: Buffer, res: ServerResponse, call: AwsCall): Promise<void> {
    const target = new URL(req.url ?? '/', upstream);
    return new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: target.host };
      const upstreamReq = httpRequest(target, { method: req.method, headers }, (upstreamRes) => {
        call.status = upstreamRes.statusCode ?? 0;
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
        upstreamRes.once('end', resolve);
        upstreamRes.once('error', reject);
      });
      upstreamReq.once('error', reject);
      upstreamReq.end(body);
    });
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the artifact proxy has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    calls,
    messages,
    emails,
    objects,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
