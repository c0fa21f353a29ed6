import { httpHandler, ok } from '#shared/http/handler.ts';
import { ProjectParams, ProjectTagsBody } from '#shared/tags/schemas.ts';
import { setProjectTags } from '#shared/tags/service.ts';
import type { Tags } from '#shared/tags/tags.ts';
import { jwtAuth } from '#shared/http/auth-context.ts';

/** PATCH /projects/{connectionId}/{projectId} {tags} → 200 the project; its keys' effective tags follow */
export const handler = httpHandler({ auth: jwtAuth, params: ProjectParams, body: ProjectTagsBody }, async ({ auth, params, body }) =>
  ok(await setProjectTags(auth.accountId, params.connectionId, params.projectId, body.tags as Tags, new Date())),
);
