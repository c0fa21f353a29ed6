/**
 * The evaluator of a sync's alerts (functions/connections/evaluate.ts) on the stack's DynamoDB: a message whose
 * evaluation fails on a DynamoDB fault comes back (a batch item failure, then the dead-letter queue), and a message
 * received again raises nothing twice. The fault is a real one: the table the function is told to use does not exist.
 */
import { randomBytes } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyncEvaluation } from '#shared/alerting/evaluation-queue.ts';
import { api, pointAtStack, registerUser, type RegisteredUser } from './harness.ts';

let user: RegisteredUser;
let restore: (() => void) | undefined;
let handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

const context = { awsRequestId: 'r-1', functionName: 'burnrate-test-ConnectorEvaluator' } as Context;
const record = (evaluation: SyncEvaluation, messageId: string) =>
  ({ messageId, receiptHandle: messageId, body: JSON.stringify(evaluation), attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:evaluations', awsRegion: 'us-east-1' }) as SQSEvent['Records'][number];
const newKeyAlerts = async () => ((await api('/alerts?type=new_key&limit=100', { token: user.token })).body.items as { keyHashes: string[]; title: string }[]);

beforeAll(async () => {
  user = await registerUser();
  const rule = await api('/alert-rules', { method: 'POST', token: user.token, body: { type: 'new_key', name: 'New keys', config: {}, channels: ['email'], isActive: true } });
  expect(rule.status).toBe(201);
  ({ handler } = await import('#functions/connections/evaluate.ts'));
});
afterAll(() => restore?.());

describe('the evaluator of a sync’s alerts', () => {
  it('a DynamoDB fault fails the record (it comes back); received again it raises the alert once, and never twice', async () => {
    const keyHash = randomBytes(32).toString('hex');
    const evaluation: SyncEvaluation = {
      accountId: user.accountId,
      connectionId: `con_01J${'0'.repeat(23)}`,
      at: new Date().toISOString(),
      reached: [],
      limitLifted: false,
      spendMoved: false,
      discovered: [{ keyHash, provider: 'openai', name: 'web-prod' }],
      unpriced: [],
    };
    restore = pointAtStack({ TABLE_NAME: 'burnrate-no-such-table' });
    const failed = await handler({ Records: [record(evaluation, 'm-1')] }, context);
    restore();
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(await newKeyAlerts()).toEqual([]);

    restore = pointAtStack();
    for (const attempt of ['m-1', 'm-1', 'm-1']) expect((await handler({ Records: [record(evaluation, attempt)] }, context)).batchItemFailures).toEqual([]);
    const alerts = await newKeyAlerts();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ keyHashes: [keyHash], title: 'New keys: new openai key "web-prod"' });
  });

  it('drops a message that is not a sync’s evaluation (retrying cannot fix it)', async () => {
    restore ??= pointAtStack();
    const bad = { ...record({} as SyncEvaluation, 'm-2'), body: '{"accountId":"br_1"}' };
    expect((await handler({ Records: [bad] }, context)).batchItemFailures).toEqual([]);
  });
});
