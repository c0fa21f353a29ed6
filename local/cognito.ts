/**
 * cognito-local as a child process, with Burnrate's user pool and app client. Its data lives in
 * `<dir>/.cognito` (it writes relative to its working directory), so a restart finds the same pool and client.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { isAbsolute, join } from 'node:path';
import {
  CognitoIdentityProviderClient,
  CreateUserPoolClientCommand,
  CreateUserPoolCommand,
  ListUserPoolClientsCommand,
  ListUserPoolsCommand,
} from '@aws-sdk/client-cognito-identity-provider';
import { assertPortFree, supervise, waitUntilReady, type SupervisedChild } from '#local/child.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#local/dynamodb.ts';

export const LOCAL_POOL_NAME = 'burnrate-local';
export const LOCAL_CLIENT_NAME = 'burnrate-local-client';

export interface CognitoLocalOptions {
  port: number;
  /** ABSOLUTE directory; cognito-local's data goes to `<dir>/.cognito`. */
  dir: string;
  timeoutMs?: number;
  /** Copy cognito-local's output (one colored line per call) to stderr. */
  echo?: boolean;
}

export interface CognitoLocal {
  endpoint: string;
  port: number;
  userPoolId: string;
  userPoolClientId: string;
  child: SupervisedChild;
  stop(): Promise<void>;
}

export async function startCognitoLocal(options: CognitoLocalOptions): Promise<CognitoLocal> {
  const { port, dir, timeoutMs = 30_000 } = options;
  if (!isAbsolute(dir)) throw new Error(`cognito-local needs an absolute data directory, got ${dir}`);
  const endpoint = `http://127.0.0.1:${port}`;
  await writeConfig(dir, endpoint);
  await assertPortFree(port, 'cognito-local', 'COGNITO_PORT');

  const bin = createRequire(import.meta.url).resolve('cognito-local/lib/bin/start.js');
  const child = supervise(
    'cognito-local',
    spawn(process.execPath, [bin], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    { echo: options.echo ?? false },
  );
  const client = new CognitoIdentityProviderClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  try {
    await waitUntilReady(child, () => client.send(new ListUserPoolsCommand({ MaxResults: 1 })), { timeoutMs });
    const userPoolId = await ensureUserPool(client);
    const userPoolClientId = await ensureUserPoolClient(client, userPoolId);
    return { endpoint, port, userPoolId, userPoolClientId, child, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  } finally {
    client.destroy();
  }
}

/**
 * `.cognito/config.json`: the issuer must be the URL the verifier fetches the JWKS from. Other keys a
 * developer put there are kept.
 */
async function writeConfig(dir: string, endpoint: string): Promise<void> {
  const configDir = join(dir, '.cognito');
  await mkdir(join(configDir, 'db'), { recursive: true });
  const file = join(configDir, 'config.json');
  let current: Record<string, unknown> = {};
  try {
    current = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // absent or unreadable: start afresh
  }
  const next = {
    ...current,
    TokenConfig: { ...(current.TokenConfig as object | undefined), IssuerDomain: endpoint },
    // Sign-in with the e-mail address, like the CDK pool (cognito-local's default too, stated for clarity).
    UserPoolDefaults: { ...(current.UserPoolDefaults as object | undefined), UsernameAttributes: ['email'] },
  };
  await writeFile(file, `${JSON.stringify(next, null, 2)}\n`);
}

async function ensureUserPool(client: CognitoIdentityProviderClient): Promise<string> {
  const pools = await client.send(new ListUserPoolsCommand({ MaxResults: 60 }));
  const found = pools.UserPools?.find((pool) => pool.Name === LOCAL_POOL_NAME);
  if (found?.Id) return found.Id;
  const created = await client.send(
    new CreateUserPoolCommand({
      PoolName: LOCAL_POOL_NAME,
      UsernameAttributes: ['email'],
      MfaConfiguration: 'OFF',
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      Policies: {
        PasswordPolicy: {
          MinimumLength: 8,
          RequireUppercase: true,
          RequireLowercase: true,
          RequireNumbers: true,
          RequireSymbols: false,
        },
      },
      Schema: [
        { Name: 'accountId', AttributeDataType: 'String', Mutable: false },
        { Name: 'userId', AttributeDataType: 'String', Mutable: false },
      ],
    }),
  );
  const id = created.UserPool?.Id;
  if (!id) throw new Error('cognito-local returned no user pool id');
  return id;
}

async function ensureUserPoolClient(client: CognitoIdentityProviderClient, userPoolId: string): Promise<string> {
  const clients = await client.send(new ListUserPoolClientsCommand({ UserPoolId: userPoolId, MaxResults: 60 }));
  const found = clients.UserPoolClients?.find((c) => c.ClientName === LOCAL_CLIENT_NAME);
  if (found?.ClientId) return found.ClientId;
  const created = await client.send(
    new CreateUserPoolClientCommand({
      UserPoolId: userPoolId,
      ClientName: LOCAL_CLIENT_NAME,
      GenerateSecret: false,
      ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH', 'ALLOW_ADMIN_USER_PASSWORD_AUTH'],
      PreventUserExistenceErrors: 'ENABLED',
      // AWS's defaults, stated: cognito-local's own default would be 24 h ID/access tokens.
      IdTokenValidity: 60,
      AccessTokenValidity: 60,
      RefreshTokenValidity: 30,
      TokenValidityUnits: { IdToken: 'minutes', AccessToken: 'minutes', RefreshToken: 'days' },
    }),
  );
  const id = created.UserPoolClient?.ClientId;
  if (!id) throw new Error('cognito-local returned no app client id');
  return id;
}
