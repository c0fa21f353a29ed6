/**
 * Server-sent events, read as they pass: a byte stream is cut into events at blank lines, and each event's
 * `data:` lines are handed on. Used two ways: to read a tee'd copy of a stream (the caller's copy untouched), and to
 * filter the caller's stream when the reporter itself asked OpenAI for the usage chunk the caller did not ask for.
 */

/** The events of a chunked text: complete ones come out, the rest waits for the next chunk. */
export class EventSplitter {
  private buffer = '';

  /** Every complete event (its raw text including the blank line that ends it) in `text` plus what waited. */
  push(text: string): string[] {
    this.buffer += text;
    const events: string[] = [];
    const boundary = /\r\n\r\n|\n\n|\r\r/g;
    let start = 0;
    for (let m = boundary.exec(this.buffer); m; m = boundary.exec(this.buffer)) {
      events.push(this.buffer.slice(start, m.index + m[0].length));
      start = m.index + m[0].length;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** What is left when the stream ends (an event without its closing blank line). */
  rest(): string {
    const rest = this.buffer;
    this.buffer = '';
    return rest;
  }
}

/** The joined `data:` lines of one raw event, or null when it has none. */
export function eventData(raw: string): string | null {
  const lines = raw.split(/\r\n|\n|\r/).filter((line) => line.startsWith('data:'));
  if (lines.length === 0) return null;
  return lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n');
}

/** Parses a `data` payload as JSON, or null (`[DONE]`, pings, anything else). */
export function parseData(data: string | null): unknown {
  if (data === null) return null;
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

/** Reads a whole event stream, calling `onData` with each event's parsed data. Never throws. */
export async function readEvents(stream: ReadableStream<Uint8Array>, onData: (data: unknown) => void): Promise<void> {
  const decoder = new TextDecoder();
  const splitter = new EventSplitter();
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const raw of splitter.push(decoder.decode(value, { stream: true }))) onData(parseData(eventData(raw)));
    }
    const last = splitter.rest() + decoder.decode();
    if (last.trim()) onData(parseData(eventData(last)));
  } catch {
    // The caller's request failed or was cancelled: whatever usage was read so far is what there is.
  } finally {
    reader.releaseLock();
  }
}

/**
 * A filter for OpenAI chat streams where the reporter added `stream_options.include_usage`: the final usage chunk
 * (`choices: []` with a `usage` object) is read and dropped, and the `"usage":null` that this option adds to every
 * other chunk is taken out again, so the caller receives the stream it asked for.
 */
export function stripAddedUsage(onData: (data: unknown) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const splitter = new EventSplitter();
  const pass = (raw: string, out: TransformStreamDefaultController<Uint8Array>) => {
    const data = parseData(eventData(raw));
    onData(data);
    if (isUsageOnlyChunk(data)) return;
    out.enqueue(encoder.encode(withoutNullUsage(raw)));
  };
  return new TransformStream({
    transform(chunk, out) {
      for (const raw of splitter.push(decoder.decode(chunk, { stream: true }))) pass(raw, out);
    },
    flush(out) {
      const last = splitter.rest() + decoder.decode();
      if (last) pass(last, out);
    },
  });
}

function isUsageOnlyChunk(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const chunk = data as { choices?: unknown; usage?: unknown };
  return Array.isArray(chunk.choices) && chunk.choices.length === 0 && typeof chunk.usage === 'object' && chunk.usage !== null;
}

/**
 * Removes a top-level `"usage":null` member from a chunk's JSON text. A quote inside a JSON string is always escaped,
 * so the unescaped `"usage"` matched here can only be a member name.
 */
export function withoutNullUsage(raw: string): string {
  return raw.replace(/,\s*"usage"\s*:\s*null(?=\s*[,}])/, '').replace(/"usage"\s*:\s*null\s*,\s*/, '');
}
