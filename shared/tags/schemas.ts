import * as z from 'zod/mini';
import { TagsField } from '#shared/tags/tags.ts';

/** A project in the path: its connection and its OpenAI project's or Anthropic workspace's id. */
export const ProjectParams = z.strictObject({
  connectionId: z.string(),
  projectId: z.string().check(z.regex(/^[^/]{1,200}$/, 'projectId is a project’s or workspace’s id (1–200 characters).')),
});
export type ProjectParams = z.infer<typeof ProjectParams>;

/** PATCH /projects/{connectionId}/{projectId}: the project's tags, replaced as a whole (`{}` clears them). */
export const ProjectTagsBody = z.strictObject({ tags: TagsField });
export type ProjectTagsBody = z.infer<typeof ProjectTagsBody>;
