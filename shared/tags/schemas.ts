import * as z from 'zod/mini';
import { MAX_TAGS, MAX_VALUE_CHARS, tagNameProblem, tagValueProblem } from '#shared/tags/tags.ts';

/** The `tags` field of a request body: a JSON object of at most 20 names → values (`{}` clears them). */
export const TagsField = z
  .record(z.string(), z.unknown(), 'tags must be an object of tag names to values.')
  .check(
    z.superRefine((tags, ctx) => {
      const entries = Object.entries(tags);
      if (entries.length > MAX_TAGS) ctx.issues.push({ code: 'custom', path: [], message: `At most ${MAX_TAGS} tags.`, input: tags });
      for (const [name, value] of entries) {
        const problem = tagNameProblem(name) ?? tagValueProblem(value);
        if (problem) ctx.issues.push({ code: 'custom', path: [name], message: `${problem} (${JSON.stringify(name.slice(0, 70))})`, input: tags });
      }
    }),
  );

/** The query field of a tag filter: `name:value` (or a name alone), 1–321 characters. */
export const tagFilterField = (field: string) =>
  z.string(`${field} must be text.`).check(
    z.minLength(1, `${field} must not be empty.`),
    z.maxLength(64 + 1 + MAX_VALUE_CHARS * 2, `${field} is too long.`),
    z.refine((text) => {
      const name = text.includes(':') ? text.slice(0, text.indexOf(':')) : text;
      return name.length > 0;
    }, `${field} is name:value (a tag name, a colon, the value).`),
  );

/** A project in the path: its connection and its OpenAI project's or Anthropic workspace's id. */
export const ProjectParams = z.strictObject({
  connectionId: z.string(),
  projectId: z.string().check(z.regex(/^[^/]{1,200}$/, 'projectId is a project’s or workspace’s id (1–200 characters).')),
});
export type ProjectParams = z.infer<typeof ProjectParams>;

/** PATCH /projects/{connectionId}/{projectId}: the project's tags, replaced as a whole (`{}` clears them). */
export const ProjectTagsBody = z.strictObject({ tags: TagsField });
export type ProjectTagsBody = z.infer<typeof ProjectTagsBody>;
