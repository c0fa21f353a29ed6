/**
 * Small stand-ins of the two providers' inference endpoints, written from their public API references:
 * OpenAI chat completions (JSON and SSE chunks, `stream_options.include_usage` adding `"usage":null` to every chunk
 * and a final `choices: []` usage chunk), responses (JSON and typed SSE events ending in `response.completed`),
 * embeddings (no id in the body; `x-request-id` header); Anthropic messages (JSON and the SSE sequence
 * message_start → content_block_* → message_delta → message_stop, with cache reads and 5m/1h cache writes).
 * Errors answer in each provider's shape; `x-standin-status: 429` forces a 429 with `retry-after`.
 * OpenAI answers the `service_tier` it was asked for (`default` for none or `auto`) and counts cache writes
 * (`cache_write_tokens`); `x-standin-outcome: failed` ends a Responses stream with `response.failed` (usage included).
 * Anthropic: `x-standin-service-tier` sets `usage.service_tier`, `x-standin-server-tools: <searches>,<fetches>` adds
 * `server_tool_use`, and `x-standin-cache-growth: <n>` makes a stream's cache writes grow by n after `message_start`
 * (the cumulative `message_delta` counts them, without a 5m/1h breakdown, as the API does).
 * Every answer is deterministic: the same request gets the same bytes, so callers can compare bodies byte for byte.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export const OPENAI_KEY = 'sk-proj-standin-openai-0000000000000000000000wXyZ';
export const ANTHROPIC_KEY = 'sk-ant-api03-standin-anthropic-000000000000000000Ab12';

/** The usage each endpoint reports (fixed, so tests know the truth). */
export const USAGE = {
  chat: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024, cache_write_tokens: 128, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } },
  responses: { input_tokens: 900, input_tokens_details: { cached_tokens: 512, cache_write_tokens: 64 }, output_tokens: 150, output_tokens_details: { reasoning_tokens: 64 }, total_tokens: 1050 },
  embeddings: { prompt_tokens: 42, total_tokens: 42 },
  messages: { input_tokens: 25, cache_creation_input_tokens: 3000, cache_read_input_tokens: 10000, cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 }, output_tokens: 300, service_tier: 'standard' },
} as const;

export interface Standin {
  url: string;
  /** Requests seen: path and parsed body. */
  seen: Array<{ path: string; body: any; headers: IncomingMessage['headers']; raw: string }>;
  close(): Promise<void>;
}

const CREATED = 1_764_000_000;

export async function startInferenceStandin(): Promise<Standin> {
  const seen: Standin['seen'] = [];
  let counter = 0;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = null;
      }
      seen.push({ path, body, headers: req.headers, raw: text });
      counter += 1;
      route(req, res, path, body, counter);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function route(req: IncomingMessage, res: ServerResponse, path: string, body: any, n: number): void {
  const anthropic = path === '/v1/messages';
  if (!['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/messages'].includes(path) || req.method !== 'POST') {
    return error(res, anthropic, 404, `Unknown path ${path}`);
  }
  // Anthropic takes its key in `x-api-key` or, as its current SDK sends it, `Authorization: Bearer`.
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const key = anthropic ? (req.headers['x-api-key'] ?? bearer) : bearer;
  // Any well-formed inference key of the provider is taken (the tests' own and the snippets' made-up ones).
  const wellFormed = typeof key === 'string' && (anthropic ? key.startsWith('sk-ant-api') : key.startsWith('sk-') && !key.startsWith('sk-ant-'));
  if (!wellFormed) return error(res, anthropic, 401, 'invalid x-api-key');
  if (req.headers['x-standin-status'] === '429') {
    res.setHeader('retry-after', '0');
    return error(res, anthropic, 429, 'Rate limit reached');
  }
  if (!body || typeof body.model !== 'string') return error(res, anthropic, 400, 'model is required');
  const id = (prefix: string) => `${prefix}${String(n).padStart(6, '0')}${body.model.length}`;
  const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
  const [searches, fetches] = (header('x-standin-server-tools') ?? '').split(',').map(Number);
  const usage = {
    ...USAGE.messages,
    service_tier: header('x-standin-service-tier') ?? USAGE.messages.service_tier,
    ...(searches !== undefined && !Number.isNaN(searches) ? { server_tool_use: { web_search_requests: searches, web_fetch_requests: fetches ?? 0 } } : {}),
  };
  switch (path) {
    case '/v1/chat/completions':
      return body.stream ? chatStream(res, body, id('chatcmpl-')) : json(res, chat(body, id('chatcmpl-')));
    case '/v1/responses':
      return body.stream ? responsesStream(res, body, id('resp_'), header('x-standin-outcome') === 'failed') : json(res, response(body, id('resp_'), 'completed'));
    case '/v1/embeddings':
      res.setHeader('x-request-id', id('req_'));
      return json(res, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.0023064255, -0.009327292, 0.015797347] }], model: body.model, usage: USAGE.embeddings });
    case '/v1/messages':
      return body.stream ? messagesStream(res, body, id('msg_'), usage, Number(header('x-standin-cache-growth') ?? 0)) : json(res, message(body, id('msg_'), usage));
  }
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function error(res: ServerResponse, anthropic: boolean, status: number, message: string): void {
  const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status === 404 ? 'not_found_error' : 'invalid_request_error';
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(anthropic ? { type: 'error', error: { type, message } } : { error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } }));
}

/** Writes SSE events one write at a time, yielding between them so they arrive as separate chunks. */
async function sse(res: ServerResponse, events: string[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const e of events) {
    res.write(e);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

const chat = (body: any, id: string) => ({
  id,
  object: 'chat.completion',
  created: CREATED,
  model: body.model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there.', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
  usage: USAGE.chat,
  service_tier: tierOf(body),
  system_fingerprint: 'fp_standin',
});

/** The tier OpenAI answers: the one asked for, `default` for none or `auto`. */
const tierOf = (body: any): string => (typeof body.service_tier === 'string' && body.service_tier !== 'auto' ? body.service_tier : 'default');

function chatStream(res: ServerResponse, body: any, id: string): void {
  const withUsage = body.stream_options?.include_usage === true;
  const chunk = (choices: unknown[], usage?: unknown) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: CREATED, model: body.model, service_tier: tierOf(body), system_fingerprint: 'fp_standin', choices, ...(withUsage ? { usage: usage ?? null } : {}) })}\n\n`;
  const events = [
    chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: 'Hello' }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: ' there.' }, logprobs: null, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
  ];
  if (withUsage) events.push(chunk([], USAGE.chat));
  events.push('data: [DONE]\n\n');
  void sse(res, events);
}

const response = (body: any, id: string, status: string) => ({
  id,
  object: 'response',
  created_at: CREATED,
  status,
  model: body.model,
  service_tier: tierOf(body),
  ...(status === 'failed' ? { error: { code: 'server_error', message: 'The model failed to finish.' } } : {}),
  output: status === 'completed' ? [{ type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there.', annotations: [] }] }] : [],
  // A failed response still reports (and is billed for) what it used.
  usage: status === 'completed' || status === 'failed' ? USAGE.responses : null,
});

function responsesStream(res: ServerResponse, body: any, id: string, failed = false): void {
  let seq = 0;
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  void sse(res, [
    event('response.created', { response: response(body, id, 'in_progress') }),
    event('response.output_text.delta', { item_id: `msg_${id}`, output_index: 0, content_index: 0, delta: 'Hello there.' }),
    failed ? event('response.failed', { response: response(body, id, 'failed') }) : event('response.completed', { response: response(body, id, 'completed') }),
  ]);
}

type MessagesUsage = Omit<typeof USAGE.messages, 'service_tier'> & { service_tier: string; server_tool_use?: { web_search_requests: number; web_fetch_requests: number } };

const message = (body: any, id: string, usage: MessagesUsage = USAGE.messages) => ({
  id,
  type: 'message',
  role: 'assistant',
  model: body.model,
  content: [{ type: 'text', text: 'Hello there.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage,
});

function messagesStream(res: ServerResponse, body: any, id: string, u: MessagesUsage, growth: number): void {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  // A stream whose cache writes grow (server-tool iterations): message_delta's cumulative counts, no 5m/1h breakdown.
  const delta =
    growth > 0
      ? {
          input_tokens: u.input_tokens,
          cache_creation_input_tokens: u.cache_creation_input_tokens + growth,
          cache_read_input_tokens: u.cache_read_input_tokens,
          output_tokens: u.output_tokens,
          server_tool_use: u.server_tool_use ?? null,
        }
      : { output_tokens: u.output_tokens };
  const { server_tool_use: _tools, ...startUsage } = u;
  void sse(res, [
    event('message_start', { message: { ...message(body, id, u), content: [], stop_reason: null, usage: { ...(growth > 0 ? startUsage : u), output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('ping', {}),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello there.' } }),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: delta }),
    event('message_stop', {}),
  ]);
}
