/**
 * Server-sent events, read as they pass: a byte stream is cut into events at blank lines, and each event's
 * `data:` lines are handed on. Used two ways: to read a tee'd copy of a stream (the caller's copy untouched), and to
 * filter the caller's stream when the reporter itself asked OpenAI for the usage chunk the caller did not ask for.
 *
 * The cut works on bytes and looks at each byte once (a blank line is ASCII, so a cut never splits a UTF-8
 * character): the cost is linear in the stream, whatever its events' sizes. What the parser holds is bounded: an event
 * that grows past `maxEventBytes` without its blank line stops the parsing of that response (the response is counted
 * as oversized and its bytes go on to the caller untouched).
 */

/** The most bytes one event may take before its response is no longer parsed (8 MiB: far above any usage event). */
export const MAX_EVENT_BYTES = 8 * 1024 * 1024;
/**
 * The bound of the chat-stream filter (1 MiB): a chat chunk is one delta, and the filter holds an event back from the
 * caller until its end, so a smaller bound keeps a caller's first byte near the provider's on any stream.
 */
export const MAX_CHAT_CHUNK_BYTES = 1024 * 1024;

const LF = 10;
const CR = 13;

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The events of a chunked byte stream: complete ones come out (each with the blank line that ends it), the rest waits
 * for the next chunk. Blank lines are `\r\n\r\n`, `\n\n` or `\r\r`, matched leftmost as the event-stream format reads them.
 */
export class EventSplitter {
  private parts: Uint8Array[] = [];
  private held = 0;
  /** The last three bytes of what is held (since the last cut), newest first; -1 where there is none. */
  private p1 = -1;
  private p2 = -1;
  private p3 = -1;
  /** Set once an event outgrew the bound: nothing more is cut (`push` returns null from then on). */
  overflowed = false;

  constructor(private readonly maxEventBytes = MAX_EVENT_BYTES) {}

  /** Every complete event ending in `chunk`; null once the event under way is past the bound (see `takeHeld`). */
  push(chunk: Uint8Array): Uint8Array[] | null {
    if (this.overflowed) return null;
    const events: Uint8Array[] = [];
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const before = [this.p1, this.p2, this.p3];
    let start = 0;
    /** Byte `k` of the event under way (-1 before its start; the bytes held from earlier chunks count). */
    const byteAt = (k: number) => (k >= start ? chunk[k]! : start > 0 ? -1 : (before[-1 - k] ?? -1));
    // Only line breaks matter: jump from one to the next with the native search.
    let nextLf = buf.indexOf(LF);
    let nextCr = buf.indexOf(CR);
    while (nextLf >= 0 || nextCr >= 0) {
      const i = nextLf < 0 ? nextCr : nextCr < 0 ? nextLf : Math.min(nextLf, nextCr);
      const b = chunk[i]!;
      const p1 = byteAt(i - 1);
      const cut = b === LF ? p1 === LF || (p1 === CR && byteAt(i - 2) === LF && byteAt(i - 3) === CR) : p1 === CR;
      if (cut) {
        const piece = chunk.subarray(start, i + 1);
        events.push(this.held === 0 ? piece : concat([...this.parts, piece], this.held + piece.length));
        this.parts = [];
        this.held = 0;
        start = i + 1;
      }
      if (b === LF) nextLf = buf.indexOf(LF, i + 1);
      else nextCr = buf.indexOf(CR, i + 1);
    }
    const end = chunk.length;
    this.p1 = byteAt(end - 1);
    this.p2 = byteAt(end - 2);
    this.p3 = byteAt(end - 3);
    if (start < chunk.length) {
      // Kept as a copy: the stream may reuse the chunk's memory.
      this.parts.push(chunk.slice(start));
      this.held += chunk.length - start;
      if (this.held > this.maxEventBytes) {
        this.overflowed = true;
        return events.length > 0 ? events : null;
      }
    }
    return events;
  }

  /** The bytes held (an event under way), handed over and forgotten. */
  takeHeld(): Uint8Array {
    const out = concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    this.p1 = this.p2 = this.p3 = -1;
    return out;
  }
}

const decoder = new TextDecoder();

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * Whether an event can carry what the reporter reads: the first events of a stream (ids and model) and every event
 * with a `"usage"` member whose value is an object (OpenAI's final chunk, Responses' terminal events, Anthropic's
 * message_start and message_delta). The rest (content deltas, `"usage":null`) is never decoded nor parsed: a scan
 * of the raw bytes, so a stream of many small events costs its reader little more than reading it.
 */
export function mayCarryUsage(raw: Uint8Array, index: number): boolean {
  if (index < 2) return true;
  const buf = asBuffer(raw);
  for (let at = buf.indexOf('"usage"'); at >= 0; at = buf.indexOf('"usage"', at + 7)) {
    let i = at + 7;
    while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x3a || buf[i] === 0x09)) i++;
    if (buf[i] === 0x7b) return true;
  }
  return false;
}

/** The joined `data:` lines of one raw event, or null when it has none. */
export function eventData(raw: string): string | null {
  if (!raw.includes('data:')) return null;
  const lines = raw.split(/\r\n|\n|\r/).filter((line) => line.startsWith('data:'));
  if (lines.length === 0) return null;
  return lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n');
}

/** Parses a `data` payload as JSON, or null (`[DONE]`, pings, anything else). */
export function parseData(data: string | null): unknown {
  if (data === null) return null;
  const first = data.charCodeAt(0);
  // Only an object or an array can carry usage: `[DONE]` and plain text are skipped without a throw.
  if (first !== 0x7b && first !== 0x5b && first !== 0x20) return null;
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

const dataOf = (raw: Uint8Array) => parseData(eventData(decoder.decode(raw)));

/** How reading a stream ended: `oversized` when an event outgrew the bound and the rest was not parsed. */
export type ReadOutcome = 'complete' | 'oversized';

/**
 * Reads a whole event stream, calling `onData` with each event's parsed data. Never throws. An event past the bound
 * ends the reading (the reporter's copy is cancelled; the caller's copy goes on untouched).
 */
export async function readEvents(stream: ReadableStream<Uint8Array>, onData: (data: unknown) => void, maxEventBytes = MAX_EVENT_BYTES): Promise<ReadOutcome> {
  const splitter = new EventSplitter(maxEventBytes);
  const reader = stream.getReader();
  let index = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const events = splitter.push(value);
      for (const raw of events ?? []) if (mayCarryUsage(raw, index++)) onData(dataOf(raw));
      if (splitter.overflowed) {
        splitter.takeHeld();
        await reader.cancel().catch(() => undefined);
        return 'oversized';
      }
    }
    const last = splitter.takeHeld();
    if (last.length > 0) onData(dataOf(last));
  } catch {
    // The caller's request failed or was cancelled: whatever usage was read so far is what there is.
  } finally {
    reader.releaseLock();
  }
  return 'complete';
}

/**
 * A filter for OpenAI chat streams where the reporter added `stream_options.include_usage`: the final usage chunk
 * (`choices: []` with a `usage` object) is read and dropped, and the `"usage":null` that this option adds to every
 * other chunk is taken out again, so the caller receives the stream it asked for. An event past the bound turns the
 * filter into a pass-through: from there on the bytes go on untouched and `onOversized` is called once.
 */
export function stripAddedUsage(onData: (data: unknown) => void, onOversized: () => void = () => undefined, maxEventBytes = MAX_CHAT_CHUNK_BYTES): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  const splitter = new EventSplitter(maxEventBytes);
  let passing = false;
  let index = 0;
  /** What the caller gets of one event: itself, itself without `"usage":null`, or nothing (the added usage chunk). */
  const pass = (raw: Uint8Array): Uint8Array | null => {
    if (!mayCarryUsage(raw, index++)) return withoutCompactNullUsage(raw) ?? encoder.encode(withoutNullUsage(decoder.decode(raw)));
    const text = decoder.decode(raw);
    const data = parseData(eventData(text));
    onData(data);
    if (isUsageOnlyChunk(data)) return null;
    const stripped = withoutNullUsage(text);
    return stripped === text ? raw : encoder.encode(stripped);
  };
  /** One enqueue per chunk read (not per event): the caller's stream keeps the provider's pace. */
  const emit = (parts: Uint8Array[], out: TransformStreamDefaultController<Uint8Array>) => {
    if (parts.length === 1) out.enqueue(parts[0]!);
    else if (parts.length > 1) out.enqueue(concat(parts, parts.reduce((n, p) => n + p.length, 0)));
  };
  return new TransformStream({
    transform(chunk, out) {
      if (passing) return out.enqueue(chunk);
      const parts: Uint8Array[] = [];
      for (const raw of splitter.push(chunk) ?? []) {
        const kept = pass(raw);
        if (kept && kept.length > 0) parts.push(kept);
      }
      if (splitter.overflowed) {
        passing = true;
        onOversized();
        parts.push(splitter.takeHeld());
      }
      emit(parts, out);
    },
    flush(out) {
      if (passing) return;
      const last = splitter.takeHeld();
      const kept = last.length > 0 ? pass(last) : null;
      if (kept) emit([kept], out);
    },
  });
}

function isUsageOnlyChunk(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const chunk = data as { choices?: unknown; usage?: unknown };
  return Array.isArray(chunk.choices) && chunk.choices.length === 0 && typeof chunk.usage === 'object' && chunk.usage !== null;
}

const COMPACT_NULL_USAGE = Buffer.from(',"usage":null');

/**
 * The event without its `,"usage":null` when it is written that way (as OpenAI writes it) or has no `"usage"` at all
 * (the event itself); null when another spelling needs the text form (`withoutNullUsage`).
 */
function withoutCompactNullUsage(raw: Uint8Array): Uint8Array | null {
  const buf = asBuffer(raw);
  const at = buf.indexOf(COMPACT_NULL_USAGE);
  if (at < 0) return buf.indexOf('"usage"') < 0 ? raw : null;
  const next = buf[at + COMPACT_NULL_USAGE.length];
  if (next !== 0x2c && next !== 0x7d) return null;
  if (buf.indexOf('"usage"', at + COMPACT_NULL_USAGE.length) >= 0) return null;
  return concat([raw.subarray(0, at), raw.subarray(at + COMPACT_NULL_USAGE.length)], raw.length - COMPACT_NULL_USAGE.length);
}

/**
 * Removes a top-level `"usage":null` member from a chunk's JSON text. A quote inside a JSON string is always escaped,
 * so the unescaped `"usage"` matched here can only be a member name.
 */
export function withoutNullUsage(raw: string): string {
  if (!raw.includes('"usage"')) return raw;
  return raw.replace(/,\s*"usage"\s*:\s*null(?=\s*[,}])/, '').replace(/"usage"\s*:\s*null\s*,\s*/, '');
}
