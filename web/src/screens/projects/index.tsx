/**
 * Projects: the month's spend by project (an OpenAI project, an Anthropic workspace; keys without one under their
 * provider), most cost first (GET /spend?groupBy=project). Choosing a project lists its keys (GET /keys?projectId=)
 * with their spend, and links to a budget for the project (the budget form with the project filled in). The chosen
 * project lives in the URL.
 */
import { api, ok, type Schemas } from '../../api/client.ts';
import { Link } from '../../router.tsx';
import { providerWords, UTC_NOTE } from '../../ui/format.ts';
import { keyName, providerStatusWords } from '../../ui/key-name.ts';
import { StoppedLine } from '../../ui/stopped-by.tsx';
import { useLoad } from '../../ui/load.ts';
import { Money } from '../../ui/money.tsx';
import { Empty, Screen, Show } from '../../ui/states.tsx';
import { SpendTable } from '../../ui/spend-table.tsx';
import { currentMonth, MonthPicker, MonthStatus, monthFrom, monthRange, monthWords } from '../../ui/month.tsx';
import { TagEditor } from '../../ui/tag-editor.tsx';
import { useCan } from '../../ui/me.tsx';

type ProjectGroup = { provider: string; project: { id: string; name: string } | null; costUsd: number; requests: number };

/** What a group is called: the project's name, else "<Provider> keys without a project". */
const groupName = (g: ProjectGroup) => g.project?.name ?? `${providerWords(g.provider)} keys without a project`;
const groupKind = (provider: string) => (provider === 'anthropic' ? 'Workspace' : 'Project');

function ProjectKeys({ provider, project, month }: { provider: string; project: { id: string; name: string }; month: string }) {
  const past = month !== currentMonth();
  const keys = useLoad(
    () => ok(api.GET('/keys', { params: { query: { projectId: project.id, provider, limit: 100, ...(past ? { month } : {}) } } })),
    [project.id, provider, month],
  );
  const connections = useLoad(() => ok(api.GET('/connections')), []);
  const connection = connections.data?.items.find((c) => c.provider === provider);
  const budget = new URLSearchParams({ scope: 'PROJECT', projectId: project.id, ...(connection ? { connectionId: connection.id } : {}), name: `${project.name} (${providerWords(provider)})` });
  const projects = useLoad(() => ok(api.GET('/projects')), []);
  const canTag = useCan('member');
  const tagged = projects.data?.items.find((p) => p.id === project.id && p.provider === provider);
  return (
    <section aria-labelledby="project-keys-title">
      <h2 id="project-keys-title">
        {groupKind(provider)} {project.name} <span class="muted">({providerWords(provider)})</span>
      </h2>
      {tagged && (
        <p data-testid="project-tags">
          Tags (every key of the {groupKind(provider).toLowerCase()} has them, and keys found in it later):{' '}
          <TagEditor
            label={project.name}
            tags={tagged.tags}
            canEdit={canTag}
            save={(tags) => ok(api.PATCH('/projects/{connectionId}/{projectId}', { params: { path: { connectionId: tagged.connectionId, projectId: project.id } }, body: { tags } }))}
            onSaved={projects.reload}
          />
        </p>
      )}
      <p>
        <Link class="button secondary" href={`/budgets?${budget}`}>
          Set a budget for this {groupKind(provider).toLowerCase()}
        </Link>
      </p>
      <Show state={keys}>
        {({ items, total }) =>
          items.length === 0 ? (
            <Empty>No keys in this {groupKind(provider).toLowerCase()}.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label={`Keys of ${project.name}`}>
              <table>
                <caption class="muted">
                  {total} {total === 1 ? 'key' : 'keys'}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col" class="num">
                      {past ? monthWords(month) : 'Month to date'}
                    </th>
                    <th scope="col" class="num">
                      All time
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((k: Schemas['Key']) => (
                    <tr key={k.hash}>
                      <td data-label="Key">
                        <Link href={`/keys/${k.hash}`}>{keyName(k)}</Link>
                        {providerStatusWords(k) && <span class="badge warning"> {providerStatusWords(k)}</span>}
                        <StoppedLine stops={k.stoppedBy} keyHash={k.hash} />
                      </td>
                      <td class="num" data-label={past ? monthWords(month) : 'Month to date'}>
                        <Money value={past ? (k.spend.month ?? 0) : k.spend.monthToDate} />
                      </td>
                      <td class="num" data-label="All time">
                        <Money value={k.spend.total} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </section>
  );
}

export function Projects({ query }: { query: URLSearchParams }) {
  const month = monthFrom(query);
  const range = monthRange(month);
  const spend = useLoad(() => ok(api.GET('/spend', { params: { query: { ...range, groupBy: 'project' } } })), [range.from, range.to]);
  const chosenId = query.get('projectId');
  const chosenProvider = query.get('provider');
  document.title = 'Projects · Burnrate';
  return (
    <Screen title="Projects">
      <div class="toolbar">
        <MonthPicker query={query} path="/projects" />
      </div>
      <MonthStatus month={month} />
      <p class="muted">
        Spend of the month by project: OpenAI projects and Anthropic workspaces as the connections report them; keys without a project (events,
        OpenRouter) under their provider. {UTC_NOTE}
      </p>
      <Show state={spend}>
        {(data) => {
          const groups = data.groups as ProjectGroup[];
          const chosen = groups.find((g) => g.project?.id === chosenId && (!chosenProvider || g.provider === chosenProvider));
          return groups.length === 0 ? (
            <Empty>No spend in {monthWords(month)}{month === currentMonth() ? ' yet' : ''}.</Empty>
          ) : (
            <>
              <SpendTable
                label="Spend by project"
                nameHeading="Project"
                caption={
                  <>
                    {month === currentMonth() ? 'Month to date' : monthWords(month)}: <Money value={data.total.costUsd} />
                  </>
                }
                rows={groups.map((g) => ({
                  key: `${g.provider}|${g.project?.id ?? ''}`,
                  name: groupName(g),
                  href: g.project
                    ? `/projects?provider=${encodeURIComponent(g.provider)}&projectId=${encodeURIComponent(g.project.id)}${month === currentMonth() ? '' : `&month=${month}`}`
                    : `/keys?provider=${encodeURIComponent(g.provider)}`,
                  provider: g.provider,
                  costUsd: g.costUsd,
                  current: g === chosen,
                }))}
              />
              {chosen?.project && <ProjectKeys provider={chosen.provider} project={chosen.project} month={month} />}
            </>
          );
        }}
      </Show>
    </Screen>
  );
}
