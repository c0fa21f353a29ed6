/**
 * The OpenAPI document the stack serves, in the tools a client team uses (versions pinned in package.json):
 * - Spectral (`spectral:oas`): no error and no warning;
 * - openapi-typescript generates the types, and a sample client (openapi-fetch) that calls EVERY operation with
 *   the document's own examples compiles under strict tsc;
 * - Prism's validation proxy (`prism proxy … --errors`) sees the contract test's whole walk: test/integration/contract.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '#shared/routes.ts';
import { api } from './harness.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'node_modules', '.bin');

type Json = Record<string, any>;
let doc: Json;
let dir: string;

beforeAll(async () => {
  const res = await api('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  // Inside the project, so the sample client resolves openapi-fetch from node_modules.
  mkdirSync(join(ROOT, '.test-data'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.test-data', 'client-tools-'));
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Spectral (spectral:oas)', () => {
  it('finds no error and no warning in the served document', async () => {
    writeFileSync(join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
    // Exit code 1 when it finds errors: read the JSON report either way.
    const { stdout } = await run(join(BIN, 'spectral'), ['lint', join(dir, 'openapi.json'), '--ruleset', join(dir, '.spectral.yaml'), '-f', 'json', '--quiet'], {
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const findings = JSON.parse(stdout || '[]') as { code: string; message: string; path: string[]; severity: number }[];
    // severity: 0 error, 1 warning, 2 info, 3 hint
    expect(findings.filter((f) => f.severity <= 1).map((f) => `${f.code} ${f.path.join('.')}: ${f.message}`)).toEqual([]);
  }, 60_000);
});

/** A TypeScript literal of a JSON value. */
const literal = (value: unknown) => JSON.stringify(value);

/** A value of a parameter's schema: its example, default, first enum member, minimum, or a string. */
function parameterValue(schema: Json): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  if (schema.format === 'date') return '2026-11-01';
  return 'x';
}

/** One typed call per operation: its path, parameters and example body; its success data typed by its component. */
function sampleClient(document: Json): { source: string; calls: number } {
  const lines = [
    "import createClient from 'openapi-fetch';",
    "import type { components, paths } from './api.ts';",
    '',
    '/** Compiles only if `value` has exactly the type `T` allows. */',
    'function expectType<T>(value: T): T {',
    '  return value;',
    '}',
    '',
    `const client = createClient<paths>({ baseUrl: 'https://api.example.com${API_PREFIX}' });`,
    '',
    'export async function everyOperation(): Promise<void> {',
  ];
  let calls = 0;
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const params: Record<string, Record<string, unknown>> = {};
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === 'query' && !p.required && p.name !== 'limit') continue;
        (params[p.in] ??= {})[p.name] = p.in === 'path' ? `${p.schema.pattern ? 'id' : 'x'}` : parameterValue(p.schema);
      }
      const init: string[] = [];
      if (Object.keys(params).length) init.push(`params: ${literal(params)}`);
      const body = op.requestBody?.content?.['application/json'];
      if (body) init.push(`body: ${literal(body.example)}`);
      const success = Object.entries(op.responses as Json).find(([status]) => status.startsWith('2'))!;
      const schema = success[1].content?.['application/json']?.schema?.$ref?.replace('#/components/schemas/', '');
      const call = `client.${method.toUpperCase()}(${literal(path)}${init.length ? `, { ${init.join(', ')} }` : ''})`;
      lines.push('  {', `    const { data, error, response } = await ${call};`);
      if (schema) lines.push(`    expectType<components['schemas'][${literal(schema)}] | undefined>(data);`);
      lines.push('    void error;', '    void response.status;', '  }');
      calls++;
    }
  }
  lines.push('}', '');
  return { source: lines.join('\n'), calls };
}

describe('openapi-typescript + openapi-fetch', () => {
  it('generate types from the served document, and a client calling every operation compiles under strict tsc', async () => {
    const types = astToString(await openapiTS(doc as Parameters<typeof openapiTS>[0]));
    writeFileSync(join(dir, 'api.ts'), types);
    // Named components come through as named types (rule types and their configs included).
    for (const name of ['CostThresholdRule', 'SpendSpikeConfig', 'CreateRuleRequest', 'Problem']) expect(types).toContain(`${name}: `);
    expect(types).not.toMatch(/unknown & unknown/);
    const { source, calls } = sampleClient(doc);
    expect(calls).toBe(Object.values(doc.paths).flatMap((item) => Object.keys(item as object)).length);
    writeFileSync(join(dir, 'client.mts'), source);
    const program = ts.createProgram([join(dir, 'client.mts')], {
      strict: true,
      noEmit: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      allowImportingTsExtensions: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
    // …and it really is checked: a wrong body type fails to compile.
    writeFileSync(join(dir, 'wrong.mts'), source.replace(/"monthlyLimit":500/, '"monthlyLimit":"500"'));
    const wrong = ts.createProgram([join(dir, 'wrong.mts')], program.getCompilerOptions());
    expect(ts.getPreEmitDiagnostics(wrong).length).toBeGreaterThan(0);
  }, 60_000);
});
