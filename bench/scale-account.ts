/**
 * A big account for the dashboard's figures and pictures (bench:web, `SCREENSHOT_KEYS`): registered through the
 * API, put on SCALE, then `keys` keys × 10 models × `days` days of aggregates loaded with ingestion's own item
 * builders (bench/spend-lib.ts), four of them labelled ("Payments worker 737" among them). The process's own
 * DynamoDB client is pointed at the stack first.
 */
import type { LocalStackInfo } from '#local/stack.ts';

export interface ScaleAccount {
  email: string;
  password: string;
  token: string;
  keyHashes: string[];
  loadMs: number;
}

export async function scaleAccount(info: LocalStackInfo, shape: { keys: number; days: number }): Promise<ScaleAccount> {
  Object.assign(process.env, {
    TABLE_NAME: info.tableName,
    AWS_REGION: info.region,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: info.dynamodbEndpoint,
  });
  const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
  const { resetConfig } = await import('#shared/config.ts');
  resetConfig();
  const { db, tableName } = await import('#shared/db/client.ts');
  const { keys } = await import('#shared/db/keys.ts');
  const { loadAggregates } = await import('./spend-lib.ts');
  const email = `scale-${Date.now()}@example.com`;
  const password = 'Scale1password';
  const res = await fetch(`${info.apiUrl}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, firstName: 'Sam', lastName: 'Scale', companyName: 'Scale Co' }),
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  const user = (await res.json()) as { accountId: string; token: string };
  await db().send(
    new UpdateCommand({ TableName: tableName(), Key: keys.account(user.accountId), UpdateExpression: 'SET #p = :p', ExpressionAttributeNames: { '#p': 'plan' }, ExpressionAttributeValues: { ':p': 'SCALE' } }),
  );
  const loaded = await loadAggregates(user.accountId, { keys: shape.keys, models: 10, days: shape.days }, { rowDays: 0, concurrency: 8 });
  for (const k of [0, 1, 2, 737]) {
    if (!loaded.keyHashes[k]) continue;
    await fetch(`${info.apiUrl}/keys/${loaded.keyHashes[k]}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
      body: JSON.stringify({ label: k === 737 ? 'Payments worker 737' : `Service ${k}` }),
    });
  }
  return { email, password, token: user.token, keyHashes: loaded.keyHashes, loadMs: loaded.ms };
}
