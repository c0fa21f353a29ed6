/**
 * `npm run bench:cold` — bundle size and module-init time of every function the CDK app builds, each beside ITS OWN
 * FLOOR: a bundle holding only the clients of remote services that function itself uses (read from its bundle's
 * metafile), each constructed at module scope (`DynamoDBDocumentClient.from(new DynamoDBClient({}))`,
 * `new KMSClient({})`, …, and `new Stripe(key)` for the functions that carry the Stripe SDK), built the same way. A
 * function that uses no such client is measured against the DynamoDB floor.
 *
 * The functions are the BurnrateFunction constructs of the real stack (every route of shared/routes.ts and the
 * notifier), constructed with bundling skipped; each is bundled here with esbuild using infra's own options
 * (`esbuildOptions` in infra/burnrate-function.ts: the exact flags NodejsFunction passes to esbuild).
 * Init time: `await import()` of the bundle in a FRESH node process (median of RUNS), with a Lambda-like
 * environment of dummies (no credentials or config of this machine) and the network disabled — module init must
 * not touch it. Each function's import runs right after one of its floor, and its ratio to that floor is the median
 * of those pairs, so a busy machine (other test runs) moves both sides of each ratio alike.
 *
 * Targets: init ≤ 1.5× its floor's; bundle ≤ its floor + 150 KB. The Stripe SDK is the client of a remote service
 * that the billing functions themselves call, as the AWS SDK clients are for the others: it is part of their floor
 * (`ddb+secrets+stripe`), not an allowance of its own.
 *
 * Both the wall time (`performance.now()`) and the CPU time of the process (`process.cpuUsage()`) of the import are
 * recorded; the init target is judged on the CPU ratio by default (`JUDGE=wall` / `--judge=wall` for wall time):
 * module init is CPU-bound, and on Lambda its wall time is its CPU time at the function's CPU share, whereas wall
 * time on a shared development machine also measures whatever else runs there.
 *
 * Options (env or argv): RUNS 7 (measured imports per bundle), WARMUP 1 (unmeasured imports per bundle first),
 * TOP 12 (inputs listed by --why), JUDGE cpu|wall, ONLY (a regular expression: the functions whose name matches); flags `--why` (what inflates each FAILing bundle, from esbuild's
 * metafile) and `--why-all` (the same for every bundle). Exit code 0 unless a bundle fails to build or to load; FAILs against
 * the targets are reported, not fatal.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeMetafile, build } from 'esbuild';
import type { BuildOptions, Metafile } from 'esbuild';
import { benchSession, heading, intOption, machine, ms, num, Progress, table } from './lib.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const { buildApp } = await import('#infra/app.ts');
const { BurnrateFunction, esbuildOptions, LAMBDA_BUNDLING, LAMBDA_RUNTIME, PROJECT_ROOT } = await import('#infra/burnrate-function.ts');

const RUNS = intOption('runs', 7);
const WARMUP = intOption('warmup', 1, 0);
const TOP = intOption('top', 12);
const WHY = process.argv.includes('--why') || process.argv.includes('--why-all');
const WHY_ALL = process.argv.includes('--why-all');

/** Which time the init target is judged on: `cpu` (default; robust to other load on the machine) or `wall`. */
const JUDGE = judgeOption();
const TARGET_INIT_RATIO = 1.5;
const TARGET_EXTRA_KB = 150;
/** Room to grow: a function should stay this far under the size target (issue "the house": ≥ 20 KB to spare). */
const SPARE_KB = 20;
const KB = 1024;

/** What a Lambda of this stack sees in its environment (dummies; nothing from this machine). */
const LAMBDA_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  LANG: 'en_US.UTF-8',
  TZ: ':UTC',
  AWS_REGION: 'us-east-1',
  AWS_DEFAULT_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIABENCHCOLDSTART00',
  AWS_SECRET_ACCESS_KEY: 'bench-cold-start-dummy-secret',
  AWS_SESSION_TOKEN: 'bench-cold-start-dummy-token',
  AWS_EXECUTION_ENV: `AWS_Lambda_${LAMBDA_RUNTIME.name}`,
  AWS_LAMBDA_FUNCTION_NAME: 'burnrate-bench',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  // The stack's env, as dummies (infra/burnrate-stack.ts, grantStripe).
  TABLE_NAME: 'burnrate-bench',
  USER_POOL_ID: 'us-east-1_BenchPool1',
  USER_POOL_CLIENT_ID: 'benchclientid0000000000000',
  CORS_ORIGINS: '*',
  CURSOR_SECRET: 'bench-cursor-secret',
  ALERTS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/burnrate-alerts',
  ALERT_EMAIL_FROM: 'alerts@example.com',
  DASHBOARD_URL: 'https://app.example.com',
  STRIPE_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:burnrate/stripe-AbCdEf',
  STRIPE_PRICE_GROWTH: 'price_growth',
  STRIPE_PRICE_SCALE: 'price_scale',
};

/**
 * Loaded before the timed script: any TCP/TLS connection or DNS lookup during module init throws (and fails the
 * run). Not timed: the clock starts in the `-e` script.
 */
const NO_NETWORK = [
  "import net from 'node:net';",
  "import dns from 'node:dns';",
  "const refuse = () => { throw new Error('bench:cold: network access during module init'); };",
  'net.Socket.prototype.connect = refuse;',
  'dns.lookup = refuse;',
  'dns.promises.lookup = refuse;',
].join(' ');

/**
 * The client packages a floor may hold (the AWS SDK clients, and the Stripe SDK: stripe 23.x has one entry that loads
 * every resource, and no smaller one), each with what its floor does with it at module scope (what a function that
 * uses it does at least: one client), and a short name for the table.
 */
const CLIENTS: { pkg: string; short: string; code: string[] }[] = [
  {
    pkg: '@aws-sdk/client-dynamodb',
    short: 'ddb',
    code: [
      "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
      "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
      'export const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));',
    ],
  },
  { pkg: '@aws-sdk/client-kms', short: 'kms', code: ["import { KMSClient } from '@aws-sdk/client-kms';", 'export const kms = new KMSClient({});'] },
  { pkg: '@aws-sdk/client-sqs', short: 'sqs', code: ["import { SQSClient } from '@aws-sdk/client-sqs';", 'export const sqs = new SQSClient({});'] },
  { pkg: '@aws-sdk/client-s3', short: 's3', code: ["import { S3Client } from '@aws-sdk/client-s3';", 'export const s3 = new S3Client({});'] },
  { pkg: '@aws-sdk/lib-storage', short: 'upload', code: ["export { Upload } from '@aws-sdk/lib-storage';"] },
  { pkg: '@aws-sdk/s3-request-presigner', short: 'presign', code: ["export { getSignedUrl } from '@aws-sdk/s3-request-presigner';"] },
  { pkg: '@aws-sdk/client-sesv2', short: 'ses', code: ["import { SESv2Client } from '@aws-sdk/client-sesv2';", 'export const ses = new SESv2Client({});'] },
  {
    pkg: '@aws-sdk/client-secrets-manager',
    short: 'secrets',
    code: ["import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';", 'export const secrets = new SecretsManagerClient({});'],
  },
  {
    pkg: '@aws-sdk/client-cognito-identity-provider',
    short: 'cognito',
    code: ["import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';", 'export const cognito = new CognitoIdentityProviderClient({});'],
  },
  { pkg: 'stripe', short: 'stripe', code: ["import Stripe from 'stripe';", "export const stripe = new Stripe('sk_test_floor');"] },
];

/** The floor of a set of client packages (CLIENTS order): its name and its source. */
function floorOf(pkgs: readonly string[]): { name: string; source: string } {
  const chosen = CLIENTS.filter((c) => pkgs.includes(c.pkg));
  const used = chosen.length > 0 ? chosen : CLIENTS.slice(0, 1);
  return { name: `FLOOR ${used.map((c) => c.short).join('+')}`, source: used.flatMap((c) => c.code).join('\n') };
}

/** The client packages in a bundle (its metafile's inputs), in CLIENTS order. */
function clientsIn(metafile: Metafile): string[] {
  const packages = new Set(byPackage(metafile).map(([name]) => name));
  return CLIENTS.filter((c) => packages.has(c.pkg)).map((c) => c.pkg);
}

interface Target {
  name: string;
  /** Absolute entry; undefined for a floor (built from `source`). */
  entry: string | undefined;
  source?: string;
  sourceMap: boolean;
}

interface Built extends Target {
  file: string;
  /** A function's own floor (set once the floors are built). */
  floor?: Built;
  bytes: number;
  metafile: Metafile;
  /** Measured imports; for the floor, every import paired with a function's. */
  samples: Sample[];
  /** Per pair: this import's / the floor import's just before it. */
  ratios: Sample[];
}

/** One import: wall-clock ms (`performance.now()`) and CPU ms (`process.cpuUsage()`, user + system) of the process. */
interface Sample {
  wall: number;
  cpu: number;
}

/** Every function the CDK app builds: the BurnrateFunction constructs of the stack (bundling skipped). */
async function functionsOfTheApp(outdir: string): Promise<Target[]> {
  // The deploy settings synth requires (infra/settings.ts), as dummies matching the env above.
  const settings = { sesIdentity: 'example.com', dashboardUrl: 'https://app.example.com', stripePriceGrowth: 'price_growth', stripePriceScale: 'price_scale' };
  const { stack } = buildApp({ app: { context: { 'aws:cdk:bundling-stacks': [], ...settings }, outdir } });
  return stack.node
    .findAll()
    .filter((c): c is InstanceType<typeof BurnrateFunction> => c instanceof BurnrateFunction)
    .map((fn) => ({
      name: relative(join(PROJECT_ROOT, 'functions'), fn.entry).replace(/\.ts$/, ''),
      entry: fn.entry,
      sourceMap: fn.sourceMap,
    }));
}

async function bundle(target: Target, dir: string): Promise<Built> {
  const outdir = join(dir, target.name.replace(/[^\w-]+/g, '_'));
  const file = join(outdir, 'index.mjs');
  const options: BuildOptions = esbuildOptions(target.entry ?? '<floor>', file, target.sourceMap);
  if (!target.entry) {
    // Same options; the source comes from stdin, resolved from the project (its node_modules).
    delete options.entryPoints;
    options.stdin = { contents: target.source ?? '', resolveDir: PROJECT_ROOT, sourcefile: 'floor.ts', loader: 'ts' };
  }
  // The metafile is a side output: it does not change the bundle.
  const result = await build({ ...options, metafile: true, logLevel: 'error' });
  return { ...target, file, bytes: (await stat(file)).size, metafile: result.metafile, samples: [], ratios: [] };
}

/** One import of the bundle in a fresh node process: wall and CPU milliseconds from before `import()` to after. */
function importOnce(file: string): Promise<Sample> {
  const script =
    'const c = process.cpuUsage(); const t = performance.now(); ' +
    `await import(${JSON.stringify(pathToFileURL(file).href)}); ` +
    'const wall = performance.now() - t; const u = process.cpuUsage(c); ' +
    'console.log(JSON.stringify({ wall, cpu: (u.user + u.system) / 1000 }));';
  const args = ['--import', `data:text/javascript,${encodeURIComponent(NO_NETWORK)}`, '--input-type=module', '-e', script];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: LAMBDA_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let sample: Sample | undefined;
      try {
        sample = JSON.parse(out.trim().split('\n').at(-1) ?? '') as Sample;
      } catch {
        sample = undefined;
      }
      if (code !== 0 || !sample || !Number.isFinite(sample.wall) || !Number.isFinite(sample.cpu)) {
        reject(new Error(`import of ${file} failed (exit ${code}):\n${err || out}`));
      } else resolve(sample);
    });
  });
}

function judgeOption(): 'cpu' | 'wall' {
  const arg = process.argv.find((a) => a.startsWith('--judge='))?.slice('--judge='.length);
  const value = (arg ?? process.env.JUDGE ?? 'cpu').toLowerCase();
  if (value !== 'cpu' && value !== 'wall') throw new Error(`JUDGE must be cpu or wall, got "${value}"`);
  return value;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** `node_modules/@aws-sdk/client-dynamodb/dist-es/…` → `@aws-sdk/client-dynamodb`; project files → `(project) shared/…`. */
function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return `(project) ${input.split('/').slice(0, 2).join('/')}`;
  const parts = input.slice(at + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** Bytes in the output by package, largest first. */
function byPackage(metafile: Metafile): [string, number][] {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals.entries()].sort((a, b) => b[1] - a[1]);
}

/** The top inputs of a bundle: by package (vs the floor's), then esbuild's own analysis, cut to TOP lines. */
async function why(built: Built, floor: Built): Promise<string> {
  const floorPackages = new Map(byPackage(floor.metafile));
  const rows = byPackage(built.metafile)
    .slice(0, TOP)
    .map(([name, bytes]) => [name, num(bytes / KB, 1), num((bytes - (floorPackages.get(name) ?? 0)) / KB, 1)]);
  const analysis = (await analyzeMetafile(built.metafile, { color: false }))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, TOP + 1)
    .join('\n');
  return [
    `\n-- ${built.name}: ${num(built.bytes / KB, 1)} KB`,
    table([['package', 'KB in bundle', 'Δ vs floor KB'], ...rows]),
    `  esbuild analyzeMetafile (top ${TOP} inputs):`,
    analysis,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------

const session = await benchSession('burnrate-cold-', 'removing the bundles');
const dir = session.dataDir;
process.exitCode = await session.run(main, (error) => {
  process.stderr.write(`\nbench:cold failed: ${error instanceof Error ? error.stack : String(error)}\n`);
});

async function main(): Promise<number> {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? process.env.ONLY;
  const functions = (await functionsOfTheApp(join(dir, 'cdk.out'))).filter((f) => !only || new RegExp(only).test(f.name));
  process.stderr.write(`bench:cold: ${functions.length} functions of the CDK app, each with the floor of its own clients, into ${dir}\n`);

  const building = new Progress('build  ', functions.length, 'bundles', 'bundles/s');
  const built = await Promise.all(
    functions.map(async (t) => {
      const b = await bundle(t, dir);
      building.add(1);
      return b;
    }),
  );
  building.finish();
  // One floor per set of clients that some function uses.
  const floors = new Map<string, Built>();
  for (const b of built) {
    const { name, source } = floorOf(clientsIn(b.metafile));
    if (!floors.has(name)) floors.set(name, await bundle({ name, entry: undefined, source, sourceMap: false }, dir));
    b.floor = floors.get(name)!;
  }

  const measuring = new Progress('measure', built.length * 2 * (RUNS + WARMUP), 'imports', 'imports/s');
  // One process at a time, round-robin over the bundles, each import of a function right after one of its floor:
  // the ratio is taken per pair, so load from elsewhere on the machine shifts both sides of it alike.
  for (let round = 0; round < WARMUP + RUNS; round++) {
    for (const b of built) {
      const floor = b.floor!;
      const tFloor = await importOnce(floor.file);
      const t = await importOnce(b.file);
      if (round >= WARMUP) {
        floor.samples.push(tFloor);
        b.samples.push(t);
        b.ratios.push({ wall: t.wall / tFloor.wall, cpu: t.cpu / tFloor.cpu });
      }
      measuring.add(2);
    }
  }
  measuring.finish();

  const wall = (list: readonly Sample[]) => median(list.map((x) => x.wall));
  const cpu = (list: readonly Sample[]) => median(list.map((x) => x.cpu));
  const rows: string[][] = [['function', 'floor', 'size KB', 'Δ floor KB', 'spare KB', 'init ms', '× floor', 'cpu ms', '× floor', 'size', 'init', 'result']];
  const failing: Built[] = [];
  const tight: Built[] = [];
  for (const f of [...floors.values()].sort((x, y) => x.bytes - y.bytes)) {
    rows.push([f.name, '', num(f.bytes / KB, 1), '–', '', ms(wall(f.samples)), '1.00', ms(cpu(f.samples)), '1.00', '', '', '']);
  }
  for (const b of built) {
    const floor = b.floor!;
    const ratio = JUDGE === 'wall' ? wall(b.ratios) : cpu(b.ratios);
    const extraKb = (b.bytes - floor.bytes) / KB;
    const sizeOk = extraKb <= TARGET_EXTRA_KB;
    const initOk = ratio <= TARGET_INIT_RATIO;
    if (!sizeOk || !initOk) failing.push(b);
    else if (TARGET_EXTRA_KB - extraKb < SPARE_KB) tight.push(b);
    rows.push([
      b.name,
      floor.name.replace(/^FLOOR /, ''),
      num(b.bytes / KB, 1),
      `${extraKb >= 0 ? '+' : ''}${num(extraKb, 1)}`,
      num(TARGET_EXTRA_KB - extraKb, 1),
      ms(wall(b.samples)),
      wall(b.ratios).toFixed(2),
      ms(cpu(b.samples)),
      cpu(b.ratios).toFixed(2),
      sizeOk ? 'ok' : `> +${TARGET_EXTRA_KB}`,
      initOk ? 'ok' : `> ${TARGET_INIT_RATIO}×`,
      sizeOk && initOk ? 'PASS' : 'FAIL',
    ]);
  }

  console.log(heading('Cold start: bundle size and module init'));
  console.log(`  ${machine()}`);
  console.log(
    `  esbuild options of infra/burnrate-function.ts: ${LAMBDA_BUNDLING.format}, target ${LAMBDA_BUNDLING.target}, minify ${LAMBDA_BUNDLING.minify}, ` +
      `mainFields ${LAMBDA_BUNDLING.mainFields.join(',')}, external [${LAMBDA_BUNDLING.externalModules.join(',')}]; runtime ${LAMBDA_RUNTIME.name}`,
  );
  const [load1] = loadavg();
  console.log(
    `  init = median of ${RUNS} imports, each in a fresh node process (${WARMUP} warm-up), Lambda-like env, network disabled:\n` +
      `  wall ms (performance.now) and cpu ms (process.cpuUsage, user+system); × floor = median of per-pair ratios (each\n` +
      `  import right after one of its own floor: the clients that function uses — AWS SDK, Stripe — nothing else). The init target is judged on ${JUDGE} time` +
      (JUDGE === 'cpu' ? ' (JUDGE=wall to change):\n  on a shared machine wall time measures the scheduler as much as the module.' : '.'),
  );
  if (load1 !== undefined && load1 > cpus().length) {
    console.log(`  NOTE: load average ${load1.toFixed(1)} on ${cpus().length} cores while measuring — wall times are noisy, cpu times less so.`);
  }
  console.log(
    `  targets: init ≤ ${TARGET_INIT_RATIO}× its floor; size ≤ its floor + ${TARGET_EXTRA_KB} KB, with ≥ ${SPARE_KB} KB of it to spare (spare KB)\n`,
  );
  console.log(table(rows, { left: [1, 9, 10, 11] }));
  console.log(`\n  ${built.length - failing.length} PASS, ${failing.length} FAIL of ${built.length} functions`);
  console.log(
    tight.length === 0
      ? `  every passing function has ≥ ${SPARE_KB} KB to spare`
      : `  passing with less than ${SPARE_KB} KB to spare: ${tight.map((b) => `${b.name} (${num(TARGET_EXTRA_KB - (b.bytes - b.floor!.bytes) / KB, 1)} KB)`).join(', ')}`,
  );

  if (WHY) {
    const explain = WHY_ALL ? built : failing;
    if (explain.length > 0) console.log(heading(`What is in the bundles (${WHY_ALL ? 'all' : 'failing'}; floor for reference)`));
    for (const b of explain) console.log(await why(b, b.floor!));
  } else if (failing.length > 0) {
    console.log('  (run with --why to see what inflates the failing bundles)');
  }
  return 0;
}
