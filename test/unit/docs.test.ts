/**
 * The README and docs/ as a reader meets them: a short README, a reference written by topic (no history of how it
 * came to be), and no link that leads nowhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

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
        const file = path ? resolve(dirname(page), decodeURI(path)) : page;
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
});
