/**
 * What a provider call is and what it used: recognising the endpoint by its path, and mapping each provider's
 * usage object to Burnrate's event fields exactly (cache reads and both classes of cache writes included).
 * Pure functions: no I/O.
 */

export type Provider = 'openai' | 'anthropic';
export type Endpoint = 'chat' | 'responses' | 'embeddings' | 'messages';

/** The tiers an event may name (`POST /ingest` `serviceTier`); anything else is sent as the default, standard. */
export type ServiceTier = 'standard' | 'batch' | 'flex' | 'priority';

/** The token counts of one event, as `POST /ingest` takes them. `inputTokens` includes every cached and cache-write token. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  cacheWrite1hInputTokens: number;
  /** The tier the provider says the call ran in (OpenAI `service_tier` of the response, Anthropic `usage.service_tier`). */
  serviceTier: ServiceTier;
  /** Anthropic server tool use: web searches and web fetches. */
  webSearchRequests: number;
  webFetchRequests: number;
}

/**
 * A provider's `service_tier` → the event's tier: OpenAI `default`/`auto` and Anthropic `standard` are standard;
 * `flex`, `priority` and `batch` as they are; OpenAI `scale` (reserved capacity, no per-token price) is sent as standard.
 */
export function serviceTierOf(value: unknown): ServiceTier {
  return value === 'flex' || value === 'priority' || value === 'batch' ? value : 'standard';
}

const ENDPOINTS: ReadonlyArray<[RegExp, Provider, Endpoint]> = [
  [/\/v1\/chat\/completions\/?$/, 'openai', 'chat'],
  [/\/v1\/responses\/?$/, 'openai', 'responses'],
  [/\/v1\/embeddings\/?$/, 'openai', 'embeddings'],
  [/\/v1\/messages\/?$/, 'anthropic', 'messages'],
];

/** A provider call is recognised by its path, whatever the host (gateways and local stand-ins count too). */
export function recognise(method: string, url: string): { provider: Provider; endpoint: Endpoint } | null {
  if (method.toUpperCase() !== 'POST') return null;
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  for (const [pattern, provider, endpoint] of ENDPOINTS) if (pattern.test(path)) return { provider, endpoint };
  return null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A non-negative integer token count, else 0 (providers send null for "none"). */
const count = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 0);
const field = (o: unknown, key: string): unknown => (isObject(o) ? o[key] : undefined);

/**
 * OpenAI: chat completions and embeddings (`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`
 * and `.cache_write_tokens`) and responses (`input_tokens`, `output_tokens`, `input_tokens_details.cached_tokens` and
 * `.cache_write_tokens`). Input counts already include the cached and cache-write tokens; the writes are the
 * 5-minute class (OpenAI has one). `serviceTier` is the response's `service_tier`, given apart (it is not in `usage`).
 */
export function openaiUsage(usage: unknown, serviceTier?: unknown): Usage | null {
  if (!isObject(usage)) return null;
  const input = 'input_tokens' in usage ? count(usage.input_tokens) : count(usage.prompt_tokens);
  const output = 'output_tokens' in usage ? count(usage.output_tokens) : count(usage.completion_tokens);
  const details = usage.input_tokens_details ?? usage.prompt_tokens_details;
  const cached = Math.min(count(field(details, 'cached_tokens')), input);
  const writes = Math.min(count(field(details, 'cache_write_tokens')), input - cached);
  return {
    inputTokens: input,
    outputTokens: output,
    cachedInputTokens: cached,
    cacheWriteInputTokens: writes,
    cacheWrite1hInputTokens: 0,
    serviceTier: serviceTierOf(serviceTier),
    webSearchRequests: 0,
    webFetchRequests: 0,
  };
}

/**
 * Anthropic: `input_tokens` counts only the tokens after the last cache breakpoint; reads and writes come apart.
 * inputTokens = input + cache reads + cache writes; 5-minute and 1-hour writes from `cache_creation` when it is
 * there, else all of `cache_creation_input_tokens` as 5-minute writes (the default lifetime). When
 * `cache_creation_input_tokens` says more than the breakdown (a stream's `message_delta` counts writes that grew
 * after `message_start`, without a breakdown), the growth is counted in the class the call wrote before: 1-hour when
 * it wrote only 1-hour entries, else 5-minute (the default). Web searches and fetches from `server_tool_use`.
 */
export function anthropicUsage(usage: unknown): Usage | null {
  if (!isObject(usage)) return null;
  const reads = count(usage.cache_read_input_tokens);
  const creation = usage.cache_creation;
  const total = count(usage.cache_creation_input_tokens);
  let write5m: number;
  let write1h: number;
  if (isObject(creation)) {
    write5m = count(creation.ephemeral_5m_input_tokens);
    write1h = count(creation.ephemeral_1h_input_tokens);
    const grown = total - write5m - write1h;
    if (grown > 0) {
      if (write1h > 0 && write5m === 0) write1h += grown;
      else write5m += grown;
    }
  } else {
    write5m = total;
    write1h = 0;
  }
  const tools = usage.server_tool_use;
  return {
    inputTokens: count(usage.input_tokens) + reads + write5m + write1h,
    outputTokens: count(usage.output_tokens),
    cachedInputTokens: reads,
    cacheWriteInputTokens: write5m,
    cacheWrite1hInputTokens: write1h,
    serviceTier: serviceTierOf(usage.service_tier),
    webSearchRequests: count(field(tools, 'web_search_requests')),
    webFetchRequests: count(field(tools, 'web_fetch_requests')),
  };
}

/** What a whole (non-streamed) JSON response says: its id, model and usage. */
export function fromJsonBody(provider: Provider, body: unknown): { id: string | null; model: string | null; usage: Usage | null } {
  const id = typeof field(body, 'id') === 'string' ? (field(body, 'id') as string) : null;
  const model = typeof field(body, 'model') === 'string' ? (field(body, 'model') as string) : null;
  const usage = provider === 'openai' ? openaiUsage(field(body, 'usage'), field(body, 'service_tier')) : anthropicUsage(field(body, 'usage'));
  return { id, model, usage };
}

/** The Responses API's stream events that carry the whole response with its final usage. */
const FINAL_RESPONSE_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Reads the usage out of a stream's events one by one. OpenAI chat: the final chunk's `usage` (with
 * `stream_options.include_usage`) and the chunks' `service_tier`; OpenAI responses: the `response` of
 * `response.completed`, `response.incomplete` or `response.failed` (a failed response is billed for what it used);
 * Anthropic: `message_start`'s message, then `message_delta`'s usage, whose counts are cumulative and win where
 * present (cache writes that grew meanwhile: see `anthropicUsage`).
 */
export class StreamUsage {
  id: string | null = null;
  model: string | null = null;
  private openai: unknown = null;
  private openaiTier: unknown = null;
  private anthropic: Json | null = null;

  constructor(private readonly provider: Provider) {}

  /** One server-sent event's `data` (already parsed JSON). */
  add(data: unknown): void {
    if (!isObject(data)) return;
    if (this.provider === 'openai') {
      const response = typeof data.type === 'string' && FINAL_RESPONSE_EVENTS.has(data.type) ? data.response : data;
      if (this.id === null && typeof field(response, 'id') === 'string') this.id = field(response, 'id') as string;
      if (this.model === null && typeof field(response, 'model') === 'string') this.model = field(response, 'model') as string;
      const tier = field(response, 'service_tier');
      if (typeof tier === 'string') this.openaiTier = tier;
      const usage = field(response, 'usage');
      if (isObject(usage)) this.openai = usage;
      return;
    }
    if (data.type === 'message_start' && isObject(data.message)) {
      if (typeof data.message.id === 'string') this.id = data.message.id;
      if (typeof data.message.model === 'string') this.model = data.message.model;
      if (isObject(data.message.usage)) this.anthropic = { ...data.message.usage };
    } else if (data.type === 'message_delta' && isObject(data.usage)) {
      const merged: Json = { ...(this.anthropic ?? {}) };
      for (const [k, v] of Object.entries(data.usage)) if (v !== null && v !== undefined) merged[k] = v;
      this.anthropic = merged;
    }
  }

  usage(): Usage | null {
    return this.provider === 'openai' ? openaiUsage(this.openai, this.openaiTier) : anthropicUsage(this.anthropic);
  }
}
