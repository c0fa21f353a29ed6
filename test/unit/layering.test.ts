/**
 * The layers of shared/, read from the code itself (every import and re-export of every TypeScript file, parsed with
 * the TypeScript compiler; type imports count like any other):
 * - the folders of shared/ form layers: no two folders import each other, and no longer circle of folders either, so
 *   every import points from a folder down to one below it;
 * - shared/db/ imports nothing from a domain folder, not even a type: it owns the shapes it stores (the domains build
 *   and map them), and takes only from shared/db/ and the low modules below it (the aggregate model and money limits
 *   in shared/usage/, periods in shared/time/, config, ids);
 * - the aggregate model lives in shared/usage/, which imports nothing from above it (not even types);
 * - no import circle anywhere in shared/ (type imports count: a circle of types is still two modules that can't be
 *   read apart), and in shared/connections/ the provider implementations never import client.ts, which picks them.
 * `import { type A }` is a value import here: with `verbatimModuleSyntax` the module is still loaded at run time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SHARED = join(ROOT, 'shared');

/** Below the data layer: pure modules without I/O that both shared/db and the domains may use. */
const LOW = ['shared/usage/', 'shared/time/', 'shared/config.ts', 'shared/ids.ts'];
/** The aggregate model every spend producer builds and shared/db writes. */
const AGGREGATE_MODEL = ['Sums', 'Aggregates', 'Aggregate', 'KeyDayModel', 'KeyUpdate', 'zeroSums', 'emptyAggregates', 'addContribution', 'Contribution'];

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
  names: string[];
  line: number;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `#shared/x.ts` and `./x.ts` to a repository path; packages and node: builtins are not ours (undefined). */
function resolveSpecifier(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('#shared/')) return `shared/${specifier.slice('#shared/'.length)}`;
  if (specifier.startsWith('.')) return relative(ROOT, resolve(dirname(join(ROOT, file)), specifier));
  if (specifier.startsWith('#')) return specifier.replace(/^#([a-z]+)\//, '$1/');
  return undefined;
}

function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Import[] = [];
  const add = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean, names: string[]) => {
    if (!specifier || !ts.isStringLiteral(specifier)) return;
    const to = resolveSpecifier(file, specifier.text);
    if (to) out.push({ from: file, to, typeOnly, names, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const names: string[] = [];
      if (clause?.name) names.push(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) names.push(...bindings.elements.map((e) => (e.propertyName ?? e.name).text));
      add(node, node.moduleSpecifier, Boolean(clause?.isTypeOnly), names);
    } else if (ts.isExportDeclaration(node)) {
      const names = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements.map((e) => (e.propertyName ?? e.name).text) : ['*'];
      add(node, node.moduleSpecifier, node.isTypeOnly, names);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly, [node.name.text]);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], false, ['*']);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal as ts.Expression, true, ['*']);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const files = tsFiles(SHARED).map((f) => relative(ROOT, f));
const imports = files.flatMap(importsOf);
const where = (i: Import) => `${i.from}:${i.line} → ${i.to}${i.typeOnly ? ' (type)' : ''} {${i.names.join(', ')}}`;
const low = (path: string) => LOW.some((l) => path === l || path.startsWith(l));

/** A file's folder in shared/ (`shared/db/keys.ts` → `shared/db/`); a file directly in shared/ is its own. */
const folderOf = (path: string) => {
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : path;
};

/** Every pair of folders that import each other, each with one import of each way. */
function folderPairs(all: Import[]): string[] {
  const first = new Map<string, Import>();
  for (const i of all) {
    if (!i.to.startsWith('shared/')) continue;
    const a = folderOf(i.from);
    const b = folderOf(i.to);
    if (a !== b && !first.has(`${a}→${b}`)) first.set(`${a}→${b}`, i);
  }
  const out: string[] = [];
  for (const [edge, i] of first) {
    const [a, b] = edge.split('→') as [string, string];
    const back = first.get(`${b}→${a}`);
    if (back && a < b) out.push(`${a} ↔ ${b}: ${where(i)}; ${where(back)}`);
  }
  return out;
}

/** Each folder's floor: 0 for a folder that imports no other, else one above the highest it imports. */
function layersOf(edges: Pick<Import, 'from' | 'to'>[]): Map<string, number> {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const floor = new Map<string, number>();
  const visit = (v: string, seen: Set<string>): number => {
    if (floor.has(v)) return floor.get(v)!;
    if (seen.has(v)) return 0; // a circle: reported by the circle check
    seen.add(v);
    const below = [...(next.get(v) ?? [])].map((w) => visit(w, seen));
    const f = below.length ? Math.max(...below) + 1 : 0;
    floor.set(v, f);
    return f;
  };
  for (const v of next.keys()) visit(v, new Set());
  return floor;
}

/** Every import circle among the given edges (each as the list of its files), by Tarjan's strongly connected components. */
function circles(edges: Import[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const connect = (v: string) => {
    index.set(v, counter);
    lowLink.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        lowLink.set(v, Math.min(lowLink.get(v)!, lowLink.get(w)!));
      } else if (onStack.has(w)) lowLink.set(v, Math.min(lowLink.get(v)!, index.get(w)!));
    }
    if (lowLink.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || next.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return found;
}

describe('the layers of shared/', () => {
  it('reads the imports of every file (the parser sees what is there)', () => {
    expect(files.length).toBeGreaterThan(100);
    const db = imports.filter((i) => i.from.startsWith('shared/db/'));
    expect(db.some((i) => i.to === 'shared/db/keys.ts' && !i.typeOnly)).toBe(true);
    expect(db.some((i) => i.typeOnly)).toBe(true);
  });

  it('shared/db imports nothing from a domain folder, types included: it owns the shapes it stores', () => {
    const wrong = imports.filter((i) => i.from.startsWith('shared/db/') && i.to.startsWith('shared/') && !i.to.startsWith('shared/db/') && !low(i.to));
    expect(wrong.map(where)).toEqual([]);
  });

  it('no two folders of shared/ import each other (types included)', () => {
    const pairs = folderPairs(imports);
    expect(pairs).toEqual([]);
  });

  it('the folders of shared/ form layers: no circle of folders of any length', () => {
    const edges = imports.filter((i) => i.to.startsWith('shared/') && folderOf(i.from) !== folderOf(i.to)).map((i) => ({ ...i, from: folderOf(i.from), to: folderOf(i.to) }));
    expect(circles(edges).map((c) => c.join(' ↔ '))).toEqual([]);
    // The layers, bottom up, for the reader of a failure: each folder above every folder it imports.
    expect(layersOf(edges).get('shared/db/')).toBeGreaterThan(layersOf(edges).get('shared/usage/') ?? 0);
  });

  it('the aggregate model comes from shared/usage, which imports nothing from above it', () => {
    const model = imports.filter((i) => i.from.startsWith('shared/db/') && i.names.some((n) => AGGREGATE_MODEL.includes(n)) && !i.to.startsWith('shared/usage/'));
    expect(model.map(where)).toEqual([]);
    const usage = imports.filter((i) => i.from.startsWith('shared/usage/'));
    expect(usage.filter((i) => i.to.startsWith('shared/') && !low(i.to)).map(where)).toEqual([]);
    expect(files.filter((f) => f.startsWith('shared/usage/')).length).toBeGreaterThan(0);
  });

  it('provider implementations never import the client that picks them', () => {
    const wrong = imports.filter((i) => i.from.startsWith('shared/connections/') && i.from !== 'shared/connections/client.ts' && i.to === 'shared/connections/client.ts' && /openai|anthropic|openrouter/.test(i.from));
    expect(wrong.map(where)).toEqual([]);
  });

  it('has no import circle anywhere in shared/', () => {
    const inShared = imports.filter((i) => i.to.startsWith('shared/'));
    expect(circles(inShared).map((c) => c.join(' ↔ '))).toEqual([]);
  });

  it('finds a circle and an upward import when there is one (the checks can fail)', () => {
    const edge = (from: string, to: string, typeOnly = false): Import => ({ from, to, typeOnly, names: [], line: 1 });
    expect(circles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd')])).toEqual([['a', 'b', 'c']]);
    expect(circles([edge('a', 'b'), edge('b', 'c')])).toEqual([]);
    expect(low('shared/usage/aggregates.ts') && !low('shared/ingest/chunks.ts')).toBe(true);
    expect(folderPairs([edge('shared/a/x.ts', 'shared/b/y.ts', true), edge('shared/b/z.ts', 'shared/a/x.ts'), edge('shared/a/x.ts', 'shared/c/y.ts')]).length).toBe(1);
    expect(folderOf('shared/db/keys.ts')).toBe('shared/db/');
    expect(folderOf('shared/ids.ts')).toBe('shared/ids.ts');
    expect(layersOf([edge('shared/a/', 'shared/b/'), edge('shared/b/', 'shared/c/')]).get('shared/a/')).toBe(2);
  });
});
