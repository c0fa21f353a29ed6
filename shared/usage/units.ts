/**
 * OpenAI's usage endpoints beyond completions and embeddings (https://platform.openai.com/docs/api-reference/usage): what each counts, how it is
 * grouped, and how its counts become a cell. Each cell's `tier` is the endpoint's name (its rows never merge with
 * token rows), its `quantity` the endpoint's metric in `unit`s, priced per unit from the table's `units` rows
 * (`item`). Requests are the endpoint's model requests where they are calls of their own (images, speech,
 * transcription, moderation); tool calls made inside a model request (web and file search) and project-level usage
 * (storage, code interpreter sessions, which carry no key) count no request.
 */
export interface UnitEndpoint {
  /** `/v1/organization/usage/<name>` */
  name: string;
  /** The table's `units` item that prices it. */
  item: string;
  unit: string;
  /** The `group_by` values Burnrate asks for (the reference's dimensions this endpoint has). */
  groupBy: readonly string[];
  /** The result field counted in `unit`s. */
  quantity: string;
  /** The result field counted as requests, if any. */
  requests: string | null;
  /** What the costs endpoint's `line_item` says of it: `"<model>, <lineItem>"`, or `<lineItem>` alone. */
  lineItem: string;
}

export const UNIT_ENDPOINTS: readonly UnitEndpoint[] = [
  { name: 'images', item: 'images', unit: 'image', groupBy: ['api_key_id', 'model', 'project_id'], quantity: 'images', requests: 'num_model_requests', lineItem: 'images' },
  { name: 'audio_speeches', item: 'audio_speeches', unit: 'character', groupBy: ['api_key_id', 'model', 'project_id'], quantity: 'characters', requests: 'num_model_requests', lineItem: 'speech' },
  { name: 'audio_transcriptions', item: 'audio_transcriptions', unit: 'second', groupBy: ['api_key_id', 'model', 'project_id'], quantity: 'seconds', requests: 'num_model_requests', lineItem: 'transcription' },
  { name: 'moderations', item: 'moderations', unit: 'request', groupBy: ['api_key_id', 'model', 'project_id'], quantity: 'num_model_requests', requests: 'num_model_requests', lineItem: 'moderations' },
  { name: 'vector_stores', item: 'vector_stores', unit: 'byte_day', groupBy: ['project_id'], quantity: 'usage_bytes', requests: null, lineItem: 'vector storage' },
  { name: 'code_interpreter_sessions', item: 'code_interpreter_sessions', unit: 'session', groupBy: ['project_id'], quantity: 'num_sessions', requests: null, lineItem: 'code interpreter sessions' },
  { name: 'web_search_calls', item: 'web_search', unit: 'call', groupBy: ['api_key_id', 'model', 'project_id'], quantity: 'num_requests', requests: null, lineItem: 'web search tool calls' },
  { name: 'file_search_calls', item: 'file_search', unit: 'call', groupBy: ['api_key_id', 'project_id'], quantity: 'num_requests', requests: null, lineItem: 'file search tool calls' },
];

const BY_NAME = new Map(UNIT_ENDPOINTS.map((e) => [e.name, e]));
const BY_LINE_ITEM = new Map(UNIT_ENDPOINTS.map((e) => [e.lineItem, e]));

/** The endpoint a cell's tier names, if the cell is one of units (not tokens). */
export const unitEndpointOf = (tier: string): UnitEndpoint | undefined => BY_NAME.get(tier);

/**
 * The model name a unit cell's usage is shown under (a breakdown row of its own, never merged with the same model's
 * tokens): `images:dall-e-3`, `web_search_calls:gpt-5.1`; the endpoint's name alone when its rows have no model.
 */
export const unitModelName = (endpoint: string, model: string | null): string => (model ? `${endpoint}:${model}` : endpoint);

/**
 * The parts of a costs `line_item` in the wordings OpenAI's bill is seen to use (docs/features/ingestion-and-pricing.md, "Bill
 * line wording"): an optional tier prefix (`"priority | gpt-5.1, input"`), the model, an optional modality word after
 * it (`"gpt-audio-mini-2025-12-15 audio, input"`), what is billed, an optional `", long context"`, and the older tier
 * suffix (`" (batch)"`). `model` is null for a line without one (`"web search tool calls"`, `"Vector storage"`).
 */
export function splitLineItem(line: string): { tier: string | null; model: string | null; what: string } {
  let rest = line.trim();
  const prefix = /^([a-z_]+) \| /i.exec(rest);
  if (prefix) rest = rest.slice(prefix[0].length);
  rest = rest.replace(/,\s*long context$/i, '');
  const suffix = /\s*\(([a-z_]+)\)$/i.exec(rest);
  if (suffix) rest = rest.slice(0, suffix.index);
  const comma = rest.indexOf(',');
  const model = comma < 0 ? null : rest.slice(0, comma).trim().toLowerCase().replace(/ (text|audio|image)$/, '');
  const what = (comma < 0 ? rest : rest.slice(comma + 1)).trim().toLowerCase();
  return { tier: (prefix?.[1] ?? suffix?.[1] ?? null)?.toLowerCase() ?? null, model, what };
}

/**
 * The unit row a cost line item bills (`"dall-e-3, images"` → `images:dall-e-3`, `"Vector storage"` →
 * `vector_stores`), if it bills usage beyond tokens. The model is part of the row only where the endpoint's usage
 * names one (as readUsage names its cells) and the line names it.
 */
export function unitRowOfLineItem(line: string): string | undefined {
  const { model, what } = splitLineItem(line);
  const e = BY_LINE_ITEM.get(what);
  if (!e) return undefined;
  return unitModelName(e.name, e.groupBy.includes('model') ? model : null);
}
