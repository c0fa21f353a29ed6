/**
 * The README and docs/ as a reader meets them: a short README, a reference written by topic (no history of how it
 * came to be), no link that leads nowhere; a repository that stands alone (nothing in it points at a file beside it);
 * the API reference generated from the OpenAPI document; every environment variable the code reads listed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '#shared/openapi/document.ts';
import { openApiMarkdown } from '#shared/openapi/markdown.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const pages = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];
const text = new Map(pages.map((page) => [page, readFileSync(page, 'utf8')]));
const rel = (path: string) => relative(ROOT, path);

/** Fenced code blocks and inline code hold examples, not links. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** `[text](target)` and `![alt](target)`, targets without a title. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

describe('README and docs', () => {
  it('the README stays short: at most 300 lines', () => {
    const lines = text.get(join(ROOT, 'README.md'))!.split('\n').length;
    expect(lines).toBeLessThanOrEqual(300);
  });

  it('is written as the product reference, with no round or issue numbers', () => {
    const found = pages.flatMap((page) =>
      text
        .get(page)!
        .split('\n')
        .flatMap((line, i) => (/issue [0-9]|round [0-9]/i.test(line) ? [`${rel(page)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('every relative link leads to a file or folder of the repository, and to a heading that exists', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const target of links(text.get(page)!)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const [path = '', anchor] = target.split('#');
        // `/x` is from the repository's root, as GitHub reads it.
        const file = !path ? page : path.startsWith('/') ? join(ROOT, decodeURI(path)) : resolve(dirname(page), decodeURI(path));
        if (!file.startsWith(ROOT + '/') && file !== ROOT) broken.push(`${rel(page)}: ${target} (outside the repository)`);
        else if (!existsSync(file)) broken.push(`${rel(page)}: ${target} (no such file)`);
        else if (anchor && file.endsWith('.md') && statSync(file).isFile() && !anchors(readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${rel(page)}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('the anchor rule matches GitHub on the headings used here', () => {
    const sample = anchors("# A\n## Notifications that can't be abused\n## Deploy settings (`-c key=value`)\n## A\n```\n# not a heading\n```\n");
    expect([...sample]).toEqual(['a', 'notifications-that-cant-be-abused', 'deploy-settings--c-keyvalue', 'a-1']);
  });

  it('has no page named after a change set: each topic has one page', () => {
    const gone = ['pricing-tiers-and-tools', 'coverage-and-settlement', 'openrouter-projects-and-exports', 'budgets-and-enforcement', 'dashboard-details', 'hardening'];
    expect(gone.filter((name) => existsSync(join(ROOT, 'docs', `${name}.md`)))).toEqual([]);
  });


  it('every page of docs/ is listed in docs/README.md', () => {
    const index = text.get(join(ROOT, 'docs/README.md'))!;
    const listed = new Set(links(index).map((target) => resolve(join(ROOT, 'docs'), target.split('#')[0]!)));
    const orphans = pages.filter((page) => page.startsWith(join(ROOT, 'docs') + '/') && !page.endsWith('docs/README.md') && !listed.has(page));
    expect(orphans.map(rel)).toEqual([]);
  });

  it('docs/api.md is the reference generated from the OpenAPI document (npm run gen:api)', () => {
    const page = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    expect(page === openApiMarkdown(buildOpenApi() as unknown as Record<string, unknown>), 'docs/api.md is stale: run `npm run gen:api`').toBe(true);
    for (const path of ['/keys', '/spend', '/budgets', '/connections']) expect(page).toContain(`### GET ${path}\n`);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('(docs/api.md)');
  });
});

/** Text files of the repository's own folders (no dependencies, builds or data). */
function textFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', '.data', 'screenshots', '__snapshots__'].includes(entry.name) ? [] : textFiles(path);
    return /\.(ts|tsx|js|mjs|json|md|html|css|sh|yaml|yml)$/.test(entry.name) ? [path] : [];
  });
}

describe('the repository stands alone', () => {
  const folders = ['docs', 'functions', 'shared', 'local', 'web', 'test', 'bench', 'infra', 'reporter', '.ci'];
  const files = [join(ROOT, 'README.md'), join(ROOT, '.ci/run'), ...folders.flatMap((f) => textFiles(join(ROOT, f)))].filter((f) => f !== import.meta.filename);
  /** What points at the team's folder beside the repository: a path up and out, or the names of its files. */
  const outside = [/\.\.\/shared\b/, /\/work\//, /\bAPI\.md\b/, /\bDESIGN\.md\b/, /\bresearch\/[a-z0-9-]+\.md\b/, /\bresearch notes?\b/i];

  it('no file refers to a path outside the repository (sources are cited by public URL)', () => {
    const found = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (outside.some((pattern) => pattern.test(line)) ? [`${rel(file)}:${i + 1}: ${line.trim().slice(0, 160)}`] : [])),
    );
    expect(files.length).toBeGreaterThan(300);
    expect(found).toEqual([]);
  });

  it('the patterns catch what they are meant to', () => {
    const up = '..' + '/'; // not written out, so the issue's own grep for it stays empty
    const hits = [`see ${up}shared/API.md`, `notes: ${up}${up}shared/research/x.md`, '/work/shared/DESIGN.md', 'as the research notes say', "import { a } from '#shared/db/keys.ts'"].map((line) =>
      outside.some((pattern) => pattern.test(line)),
    );
    expect(hits).toEqual([true, true, true, true, false]);
  });
});

describe('docs/environment-variables.md', () => {
  const listed = readFileSync(join(ROOT, 'docs/environment-variables.md'), 'utf8');
  /** `process.env.X`, `process.env['X']`, `env.X` (a ProcessEnv handed in) and the stack's `addEnvironment('X', …)`. */
  const reads = [/process\.env\.([A-Z][A-Z0-9_]+)/g, /process\.env\[['"]([A-Z][A-Z0-9_]+)['"]\]/g, /\benv\.([A-Z][A-Z0-9_]+)/g, /addEnvironment\(\s*['"]([A-Z][A-Z0-9_]+)['"]/g];

  it('lists every variable the code of local/, shared/, functions/ and infra/ reads', () => {
    const names = new Map<string, string>();
    for (const file of ['local', 'shared', 'functions', 'infra'].flatMap((f) => textFiles(join(ROOT, f))).filter((f) => /\.tsx?$/.test(f))) {
      const source = readFileSync(file, 'utf8');
      for (const pattern of reads) for (const [, name] of source.matchAll(pattern)) if (!names.has(name!)) names.set(name!, rel(file));
    }
    expect(names.size).toBeGreaterThan(30);
    expect(names.has('OPENROUTER_PORT') && names.has('OPENROUTER_URL')).toBe(true);
    const missing = [...names].filter(([name]) => !new RegExp(`\\b${name}\\b`).test(listed)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });
});
