/**
 * `npm start`: every handler on this machine behind http://localhost:3000/api, with DynamoDB Local and
 * cognito-local keeping their data under .data/.
 *
 * Environment: PORT (3000), DATA_DIR (.data), DYNAMODB_PORT (8000), COGNITO_PORT (9229), STRIPE_PORT (12111),
 * OPENAI_ADMIN_PORT / ANTHROPIC_ADMIN_PORT (the admin API stand-ins; any free port), OPENAI_ADMIN_URL /
 * ANTHROPIC_ADMIN_URL (where connections call the providers, a base URL without /v1; default: the stand-ins), OPENROUTER_PORT /
 * OPENROUTER_URL (the OpenRouter stand-in; a base URL with or without /api/v1), HOST (127.0.0.1;
 * another address only with ALLOW_REMOTE=1), LOG_LEVEL (WARN: the handlers' structured logs; INFO shows every request's log lines),
 * LOG_REQUESTS=0 (no request log), CONNECTIONS_KEY_DIR (the folder of the key that seals connections' admin keys,
 * outside the data folder; default ~/.config/burnrate), DEBUG_LOCAL=1 (copy the children's output to stderr),
 * STOP_ON_STDIN_END=1 (stop when stdin closes: for a parent process such as the integration tests' setup),
 * RATE_LIMITS=off (no per-IP register/forgot-password and failed-login limits: for test suites and demo seeding).
 */
import { mkdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { LocalStack } from '#local/stack.ts';
import { ensureWebBuild, WEB_DIST } from '#local/web.ts';

// The handlers log structured JSON (Powertools): warnings and errors by default here, all of it with LOG_LEVEL=INFO.
// Set BEFORE the stack's modules load (they are imported below, dynamically): the logger reads its level when built.
process.env.POWERTOOLS_LOG_LEVEL ??= process.env.LOG_LEVEL ?? 'WARN';

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new Error(`${name} must be a port number (1-65535), got "${raw}".`);
  }
  return value;
}

// A reader that went away (a closed pipe) must not crash the stack before it stopped its children.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  const dataDir = resolve(process.env.DATA_DIR || '.data');
  const fromCwd = relative(process.cwd(), dataDir);
  const shown = fromCwd === '' ? '.' : fromCwd.startsWith('..') ? dataDir : fromCwd;
  const options = {
    port: port('PORT', 3000),
    dataDir,
    dynamodbPort: port('DYNAMODB_PORT', 8000),
    cognitoPort: port('COGNITO_PORT', 9229),
    // A fixed port, so a checkout URL still opens after a restart.
    stripePort: port('STRIPE_PORT', 12111),
    openaiAdminPort: port('OPENAI_ADMIN_PORT', 0),
    anthropicAdminPort: port('ANTHROPIC_ADMIN_PORT', 0),
    openrouterPort: port('OPENROUTER_PORT', 0),
    host: process.env.HOST || undefined,
    quiet: process.env.LOG_REQUESTS === '0',
    echoChildren: process.env.DEBUG_LOCAL === '1',
    dynamodbInMemory: process.env.DYNAMODB_IN_MEMORY === '1',
    webDir: WEB_DIST,
  };
  await mkdir(join(dataDir, 'outbox'), { recursive: true });
  const { startLocalStack } = await import('#local/stack.ts');
  // The dashboard: built first when missing or older than web/ (SKIP_WEB_BUILD=1 serves whatever is there).
  if (process.env.SKIP_WEB_BUILD !== '1') await ensureWebBuild();

  console.log(`Starting the local stack (data in ${shown}/) ...`);
  let stack: LocalStack | undefined;
  let stopping = false;

  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the local stack ...`);
    await stack?.stop();
    process.exit(0);
  };
  process.on('SIGINT', (s) => void shutdown(s));
  process.on('SIGTERM', (s) => void shutdown(s));
  process.on('SIGHUP', (s) => void shutdown(s));
  // `npm start` execs node, so a SIGTERM to the npm process reaches us. Should whatever started us die without
  // passing a signal on (a SIGKILL of a wrapper), we are re-parented: stop then too, children included.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown('SIGHUP');
  }, 500).unref();
  if (process.env.STOP_ON_STDIN_END === '1') {
    // Started by a test run: when that process dies, however abruptly, our stdin closes and we stop too.
    process.stdin.on('end', () => void shutdown('SIGHUP')).resume();
  }

  stack = await startLocalStack(options);
  if (stopping) {
    // A signal arrived while starting: stop what just came up.
    await stack.stop();
    process.exit(0);
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`DynamoDB Local at ${stack.dynamodbEndpoint} (table ${stack.tableName}, ${options.dynamodbInMemory ? 'in memory: nothing persists' : `data in ${shown}/dynamodb`})`);
  console.log(
    `cognito-local  at ${stack.cognitoEndpoint} (user pool ${stack.userPoolId}, app client ${stack.userPoolClientId}, data in ${shown}/cognito)`,
  );
  console.log(`Stripe stand-in at ${stack.stripeUrl} (checkout and portal pages, signed webhooks to the API)`);
  console.log(`OpenAI admin API stand-in at ${stack.openaiAdmin.url} (admin key ${stack.openaiAdmin.adminKey})`);
  console.log(`Anthropic admin API stand-in at ${stack.anthropicAdmin.url} (admin key ${stack.anthropicAdmin.adminKey})`);
  console.log(`OpenRouter stand-in at ${stack.openrouter.url}/api/v1 (management key ${stack.openrouter.adminKey})`);
  // The stack set these (to the stand-ins unless given): say so when connections call elsewhere.
  for (const [name, standIn] of [['OPENAI_ADMIN_URL', stack.openaiAdmin.url], ['ANTHROPIC_ADMIN_URL', stack.anthropicAdmin.url], ['OPENROUTER_URL', stack.openrouter.url]] as const) {
    if (process.env[name] !== standIn) console.log(`Connections call ${process.env[name]} (${name}), not the stand-in`);
  }
  console.log(`Outbox (e-mail) in ${shown}/outbox/`);
  console.log(`Dashboard at ${stack.apiUrl.replace(/\/api$/, '/')}`);
  console.log(`API at ${stack.apiUrl} (ready in ${seconds} s; Ctrl-C stops)`);

  const reason = await stack.unexpectedExit;
  // Ctrl-C reaches the children too (same process group): give our own signal handler the first word.
  await new Promise((r) => setTimeout(r, 200));
  if (stopping) return;
  stopping = true;
  console.error(`\nThe local stack is broken: ${reason}`);
  await stack.stop();
  process.exit(1);
}

main().catch((error: unknown) => {
  console.error(`\nCould not start the local stack:\n${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
