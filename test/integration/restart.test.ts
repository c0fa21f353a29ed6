/**
 * A restart of the local stack on the same data directory keeps everything: the user pool and app client
 * (same ids), users and their passwords, and table items. Runs its own stack (DynamoDB Local locks its file,
 * so the shared stack's directory cannot be opened twice).
 */
import { rm } from 'node:fs/promises';
import {
  AdminCreateUserCommand,
  AdminSetUserPasswordCommand,
  CognitoIdentityProviderClient,
  InitiateAuthCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalStackInfo } from '#local/stack.ts';
import { startStackProcess, type StackProcess } from './global-setup.ts';
import { uniqueEmail } from './harness.ts';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

function clients(info: LocalStackInfo) {
  return {
    cognito: new CognitoIdentityProviderClient({ endpoint: info.cognitoEndpoint, region: info.region, credentials }),
    dynamo: DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: info.dynamodbEndpoint, region: info.region, credentials }),
    ),
  };
}

describe('restarting the local stack', () => {
  let running: StackProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    await running?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps the user pool, its users and the table items', { timeout: 150_000 }, async () => {
    running = await startStackProcess();
    dataDir = running.dataDir;
    const first = running.info;
    const email = uniqueEmail('restart');
    const password = 'Restart1Pass';
    const item = { pk: 'TEST#restart', sk: email, note: 'kept across restarts' };

    const before = clients(first);
    await before.cognito.send(
      new AdminCreateUserCommand({
        UserPoolId: first.userPoolId,
        Username: email,
        MessageAction: 'SUPPRESS',
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: 'custom:accountId', Value: 'br_01JZ3N5Q8W0000000000000009' },
        ],
      }),
    );
    await before.cognito.send(
      new AdminSetUserPasswordCommand({ UserPoolId: first.userPoolId, Username: email, Password: password, Permanent: true }),
    );
    await before.dynamo.send(new PutCommand({ TableName: first.tableName, Item: item }));
    before.cognito.destroy();
    before.dynamo.destroy();

    await running.stop();
    running = await startStackProcess(dataDir);
    const second = running.info;

    expect(second.userPoolId).toBe(first.userPoolId);
    expect(second.userPoolClientId).toBe(first.userPoolClientId);
    const after = clients(second);
    const auth = await after.cognito.send(
      new InitiateAuthCommand({
        ClientId: second.userPoolClientId,
        AuthFlow: 'USER_PASSWORD_AUTH',
        AuthParameters: { USERNAME: email, PASSWORD: password },
      }),
    );
    const claims = JSON.parse(Buffer.from(auth.AuthenticationResult!.IdToken!.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({
      'custom:accountId': 'br_01JZ3N5Q8W0000000000000009',
      iss: `${second.cognitoEndpoint}/${second.userPoolId}`,
    });
    const got = await after.dynamo.send(new GetCommand({ TableName: second.tableName, Key: { pk: item.pk, sk: item.sk } }));
    expect(got.Item).toEqual(item);
    after.cognito.destroy();
    after.dynamo.destroy();

    const health = await fetch(`${second.apiUrl}/health`);
    expect(health.status).toBe(200);
  });
});
