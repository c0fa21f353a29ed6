/**
 * The connection clients' exact usage query strings, pinned to each reference's documented spelling: OpenAI's
 * OpenAPI document gives array parameters no `style`, so `group_by` is repeated (`group_by=a&group_by=b`); Anthropic's
 * reference and cookbook spell it `group_by[]=a&group_by[]=b`. The stand-ins accept only these spellings for
 * `group_by`, so a client that drifted would fail there too.
 */
import { describe, expect, it } from 'vitest';
import { openAiClient } from '#shared/connections/openai.ts';
import { anthropicClient } from '#shared/connections/anthropic.ts';

/** A fetch that records every URL and answers an empty report page. */
function recorder() {
  const urls: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    urls.push(String(input instanceof Request ? input.url : input));
    return new Response(JSON.stringify({ object: 'page', data: [], has_more: false, next_page: null }), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  return { urls, fetch };
}

const query = (url: string) => decodeURIComponent(new URL(url).search.slice(1));

describe('usage query strings', () => {
  it('OpenAI: completions grouped by key, model, project, batch and service_tier (repeated group_by); embeddings without batch', async () => {
    const { urls, fetch } = recorder();
    await openAiClient('https://api.openai.com', 'sk-admin-test', { fetch }).readUsage('2026-11-01', '2026-11-08');
    const byPath = new Map(urls.map((u) => [new URL(u).pathname, query(u)]));
    expect(byPath.get('/v1/organization/usage/completions')).toBe(
      'start_time=1793491200&end_time=1794096000&bucket_width=1d&group_by=api_key_id&group_by=model&group_by=project_id&group_by=batch&group_by=service_tier&limit=31',
    );
    expect(byPath.get('/v1/organization/usage/embeddings')).toBe(
      'start_time=1793491200&end_time=1794096000&bucket_width=1d&group_by=api_key_id&group_by=model&group_by=project_id&limit=31',
    );
    // The usage endpoints beyond tokens, each grouped by the dimensions its reference gives it.
    const window = 'start_time=1793491200&end_time=1794096000&bucket_width=1d';
    for (const name of ['images', 'audio_speeches', 'audio_transcriptions', 'moderations', 'web_search_calls']) {
      expect(byPath.get(`/v1/organization/usage/${name}`), name).toBe(`${window}&group_by=api_key_id&group_by=model&group_by=project_id&limit=31`);
    }
    expect(byPath.get('/v1/organization/usage/file_search_calls')).toBe(`${window}&group_by=api_key_id&group_by=project_id&limit=31`);
    for (const name of ['vector_stores', 'code_interpreter_sessions']) expect(byPath.get(`/v1/organization/usage/${name}`), name).toBe(`${window}&group_by=project_id&limit=31`);
    expect(urls).toHaveLength(10);
  });

  it('Anthropic: the messages usage report grouped with group_by[] by key, workspace, model, service tier and context window', async () => {
    const { urls, fetch } = recorder();
    await anthropicClient('https://api.anthropic.com', 'sk-ant-admin01-test', { fetch }).readUsage('2026-11-01', '2026-11-08');
    expect(urls.map((u) => `${new URL(u).pathname}?${query(u)}`)).toEqual([
      '/v1/organizations/usage_report/messages?starting_at=2026-11-01T00:00:00Z&ending_at=2026-11-08T00:00:00Z&bucket_width=1d' +
        '&group_by[]=api_key_id&group_by[]=workspace_id&group_by[]=model&group_by[]=service_tier&group_by[]=context_window&limit=31',
    ]);
  });
});
