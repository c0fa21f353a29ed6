/**
 * Property-based fuzzing of every route of the route table (test/fuzz/run.ts), a few hundred cases: never a 5xx,
 * every 4xx problem+json, nothing written by an invalid input. `npm run fuzz` runs the same core for ≥ 10,000 cases.
 *
 * FUZZ_RUNS (cases per route, default 10: about 600 cases in all) and FUZZ_SEED (default fixed, so a failure replays; set it to explore).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '#shared/config.ts';
import { routes } from '#shared/routes.ts';
import { stack } from './harness.ts';
import { formatViolations, fuzzRoute, summaryTable, type FuzzEnv, type RouteReport } from '../fuzz/run.ts';
import { paramKinds, routeKey, specOf } from '../fuzz/arbitraries.ts';

const RUNS = Number(process.env.FUZZ_RUNS || 10);
const SEED = Number(process.env.FUZZ_SEED || 20_261_121);

const reports: RouteReport[] = [];
let env: FuzzEnv;
const savedInsecure = process.env.ALLOW_INSECURE_WEBHOOKS;

beforeAll(() => {
  env = { info: stack() };
  // The oracle checks alert-rule webhook URLs with the stack's own rule (the local stack allows http://127.0.0.1).
  process.env.ALLOW_INSECURE_WEBHOOKS = 'true';
  resetConfig();
});

afterAll(() => {
  if (savedInsecure === undefined) delete process.env.ALLOW_INSECURE_WEBHOOKS;
  else process.env.ALLOW_INSECURE_WEBHOOKS = savedInsecure;
  resetConfig();
  if (process.env.FUZZ_SUMMARY === '1') console.log(`${summaryTable(reports)}\nseed ${SEED}`);
});

it('every route of the route table has a fuzz spec and known path parameters', () => {
  for (const route of routes) {
    expect(() => specOf(route), routeKey(route)).not.toThrow();
    expect(() => paramKinds(route), routeKey(route)).not.toThrow();
  }
});

describe.concurrent(`fuzz (${RUNS} cases a route, seed ${SEED}): only 2xx/4xx, 4xx as problem+json, nothing written by invalid input`, () => {
  it.each(routes.map((route) => ({ route, name: routeKey(route) })))(
    '$name',
    async ({ route }) => {
      const report = await fuzzRoute(env, route, { runs: RUNS, seed: SEED, shrink: true });
      reports.push(report);
      expect(report.cases).toBe(Math.max(1, Math.ceil(RUNS / 2)) + Math.max(1, RUNS - Math.ceil(RUNS / 2)));
      // Printed as text: the failing input, the response, and a shrunk reproduction.
      expect(formatViolations(report.violations), `FUZZ_SEED=${SEED} replays these inputs`).toBe('');
    },
    90_000,
  );
});
