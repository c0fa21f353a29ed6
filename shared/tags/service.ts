/**
 * Tags of keys and projects (docs/features/tags-and-chargeback.md): `PATCH /keys/{hash} {tags}`, `GET /projects`,
 * `PATCH /projects/{connectionId}/{projectId} {tags}`, and the sync's part: a key discovered in a tagged project gets
 * the project's tags in the same sync (`inheritProjectTags`).
 */
import { NotFound } from '#shared/http/errors.ts';
import type { Item } from '#shared/db/client.ts';
import { listKeysAndProjects, listProviderKeys } from '#shared/db/discovered-keys.ts';
import { getConnection } from '#shared/db/connections.ts';
import * as repo from '#shared/db/tags.ts';
import { effectiveTags, effectiveTagsOf, sameTags, sortedTags, tagsOf, type Tags } from '#shared/tags/tags.ts';

const ATTEMPTS = 8;

/** A key's project as stored on its item (`{id, name}`), or null. */
function projectOf(key: Item | undefined): { id: string; name: string } | null {
  const p = key?.project as { id?: unknown; name?: unknown } | null | undefined;
  return p && typeof p.id === 'string' ? { id: p.id, name: typeof p.name === 'string' ? p.name : p.id } : null;
}

/** The (connection, project) a key belongs to, or undefined (an ingest key, a key without a project). */
export function projectRefOf(item: Item | undefined): { connectionId: string; projectId: string; name: string } | undefined {
  const project = projectOf(item);
  const connectionId = item?.connectionId;
  return project && typeof connectionId === 'string' && item?.source === 'connection' ? { connectionId, projectId: project.id, name: project.name } : undefined;
}

/** Replaces a key's own tags; its effective tags follow. Undefined when the key is not the account's. */
export async function setKeyTags(accountId: string, keyHash: string, own: Tags, now: Date): Promise<Item | undefined> {
  const tags = sortedTags(own);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const key = await repo.getKeyItem(accountId, keyHash);
    if (!key) return undefined;
    const ref = projectRefOf(key);
    const project = ref ? await repo.getProjectTags(accountId, ref.connectionId, ref.projectId) : undefined;
    const outcome = await repo.writeKeyTags(accountId, keyHash, tags, effectiveTags(project?.tags, tags), ref ? { ...ref, rev: project?.rev ?? 0 } : undefined, now);
    if (outcome.status === 'written') return outcome.item;
    if (outcome.status === 'missing') return undefined;
  }
  throw new Error('The key’s project kept changing while its tags were written.');
}

export interface ProjectView {
  connectionId: string;
  provider: string;
  id: string;
  name: string;
  tags: Tags;
  keys: number;
}

/** Projects are what the account's keys name (ONE Query of the key index) with their tags (ONE Query). */
function projectsOf(keyItems: Item[], tagItems: repo.ProjectTagsItem[]): Map<string, ProjectView> {
  const tagsOfProject = new Map(tagItems.map((p) => [`${p.connectionId}|${p.projectId}`, p.tags]));
  const out = new Map<string, ProjectView>();
  for (const key of keyItems) {
    const ref = projectRefOf(key);
    if (!ref) continue;
    const id = `${ref.connectionId}|${ref.projectId}`;
    const seen = out.get(id);
    if (seen) seen.keys += 1;
    else out.set(id, { connectionId: ref.connectionId, provider: key.provider as string, id: ref.projectId, name: ref.name, tags: tagsOfProject.get(id) ?? {}, keys: 1 });
  }
  return out;
}

/** GET /projects: every project of the account's connections, by name (ONE Query: keys and projects' tags). */
export async function listProjects(accountId: string) {
  const { keys: keyItems, projects } = await listKeysAndProjects(accountId);
  const items = [...projectsOf(keyItems, projects.map(repo.toProject)).values()].sort(
    (a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()) || a.provider.localeCompare(b.provider) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return { items };
}

/**
 * PATCH /projects/{connectionId}/{projectId}: the project's tags replaced, then every key of it gets its effective
 * tags again. 404 unless the connection is the account's and one of its keys is in that project.
 */
export async function setProjectTags(accountId: string, connectionId: string, projectId: string, tags: Tags, now: Date): Promise<ProjectView> {
  const [connection, keyItems] = await Promise.all([getConnection(accountId, connectionId), listProviderKeys(accountId)]);
  const members = keyItems.filter((k) => {
    const ref = projectRefOf(k);
    return ref?.connectionId === connectionId && ref.projectId === projectId;
  });
  if (!connection || members.length === 0) throw new NotFound('No such project.');
  const next = sortedTags(tags);
  for (let attempt = 0; ; attempt++) {
    const held = await repo.getProjectTags(accountId, connectionId, projectId);
    if (await repo.putProjectTags(accountId, connectionId, projectId, next, held?.rev ?? 0, now)) break;
    if (attempt >= ATTEMPTS) throw new Error('The project’s tags kept changing while they were written.');
  }
  await Promise.all(members.map((key) => followProject(accountId, key, next)));
  const ref = projectRefOf(members[0])!;
  return { connectionId, provider: connection.provider, id: projectId, name: ref.name, tags: next, keys: members.length };
}

/** One key's effective tags from the project's `tags`, on the revision it holds; read again when it changed. */
async function followProject(accountId: string, key: Item, projectTags: Tags): Promise<void> {
  let item: Item | undefined = key;
  for (let attempt = 0; item && attempt < ATTEMPTS; attempt++) {
    const want = effectiveTags(projectTags, tagsOf(item.tags));
    if (item.effectiveTags !== undefined && sameTags(effectiveTagsOf(item), want)) return;
    if (await repo.setEffectiveTags(accountId, item.keyHash as string, want, repo.tagsRevOf(item))) return;
    item = await repo.getKeyItem(accountId, key.keyHash as string);
    // The key's own change came after the project's and computed from it: nothing left to do.
    if (item && sameTags(effectiveTagsOf(item), effectiveTags(projectTags, tagsOf(item.tags)))) return;
  }
}

/**
 * The sync's part (after its keys are written): every key of the connection whose effective tags are not its
 * project's overlaid by its own gets them — a key discovered in a tagged project, a key moved to another project.
 * Reads the project tags (ONE Query) and writes only keys that differ: a sync that finds nothing new writes nothing.
 */
export async function inheritProjectTags(accountId: string, connectionId: string, keyItems: Iterable<Item>): Promise<number> {
  const projects = await repo.listProjectTags(accountId);
  const byProject = new Map(projects.filter((p) => p.connectionId === connectionId).map((p) => [p.projectId, p.tags]));
  const stale: { item: Item; want: Tags }[] = [];
  for (const item of keyItems) {
    if (item.source !== 'connection' || item.connectionId !== connectionId) continue;
    const ref = projectRefOf(item);
    const want = effectiveTags(ref ? byProject.get(ref.projectId) : undefined, tagsOf(item.tags));
    if (!sameTags(effectiveTagsOf(item), want)) stale.push({ item, want });
  }
  let written = 0;
  await Promise.all(
    stale.map(async ({ item, want }) => {
      // A person's change since the sync read the key wins: the revision check fails, and the key is left alone.
      if (await repo.setEffectiveTags(accountId, item.keyHash as string, want, repo.tagsRevOf(item))) written += 1;
    }),
  );
  return written;
}
