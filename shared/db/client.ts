import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';

let client: DynamoDBDocumentClient | undefined;

/** The document client, created once per container (locally pointed at DynamoDB Local). */
export function db(): DynamoDBDocumentClient {
  if (!client) {
    const cfg = config();
    client = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: cfg.region, ...(cfg.dynamodbEndpoint ? { endpoint: cfg.dynamodbEndpoint } : {}) }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
  }
  return client;
}

export const tableName = (): string => config().tableName;

/** Index (in a TransactWriteItems) of each cancelled action whose condition failed. */
export function failedConditions(error: unknown): number[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  const reasons = (error as Error & { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
}
