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

/** The needles, as bytes once (a string needle is re-encoded by every `indexOf`). */
const USAGE = Buffer.from('"usage"');
const BLANK_LINES = [Buffer.from('\n\n'), Buffer.from('\r\r'), Buffer.from('\r\n\r\n')];

/** Where the blank line that ends the last complete event in `buf` ends (0 when there is none). */
function lastCut(buf: Buffer, before = buf.length): number {
  let cut = 0;
  for (const blank of BLANK_LINES) {
    const at = before - blank.length < 0 ? -1 : buf.lastIndexOf(blank, before - blank.length);
    if (at >= 0) cut = Math.max(cut, at + blank.length);
  }
  return cut;
}

/** Where the event that starts at or before `from` ends: after its blank line, or `end` when none is found. */
function nextCut(buf: Buffer, from: number, end: number): number {
  let cut = end;
  for (const blank of BLANK_LINES) {
    const at = buf.indexOf(blank, from);
    if (at >= 0 && at + blank.length <= cut) cut = at + blank.length;
  }
  return cut;
}

/** The first byte after `at` that is not JSON white space or a colon. */
function valueAt(buf: Buffer, at: number): number {
  while (at < buf.length && (buf[at] === 0x20 || buf[at] === 0x3a || buf[at] === 0x09 || buf[at] === 0x0a || buf[at] === 0x0d)) at++;
  return at;
}

/**
 * A byte stream cut into runs of whole events, cheaply: each chunk is searched (natively) for the last blank line
 * only, the bytes before it come out as one run (the chunk itself, or a part of it, when nothing was held), and the
 * rest is held for the next chunk. Past `maxEventBytes` held, the stream is no longer cut (`overflowed`).
 */
export class EventRuns {
  private parts: Uint8Array[] = [];
  private held = 0;
  /** The last bytes held (up to 3), for a blank line that straddles two chunks. */
  private tail: number[] = [];
  overflowed = false;

  constructor(private readonly maxEventBytes: number) {}

  /** The whole events completed by `chunk` (possibly empty); null once overflowed (see `takeHeld`). */
  push(chunk: Uint8Array): Uint8Array | null {
    if (this.overflowed) return null;
    // Only the new chunk is searched (and the seam with what is held): the cost stays linear in the stream.
    let cut = lastCut(asBuffer(chunk));
    if (cut === 0 && this.held > 0) {
      const seam = Buffer.from([...this.tail, ...chunk.subarray(0, 3)]);
      cut = Math.max(0, lastCut(seam) - this.tail.length);
    }
    let run: Uint8Array = chunk.subarray(0, 0);
    if (cut > 0) {
      const head = chunk.subarray(0, cut);
      run = this.held > 0 ? concat([...this.parts, head], this.held + cut) : head;
      this.parts = [];
      this.held = 0;
      this.tail = [];
    }
    if (cut < chunk.length) {
      // Kept as a copy: the stream may reuse the chunk's memory.
      const rest = chunk.slice(cut);
      this.parts.push(rest);
      this.held += rest.length;
      this.tail = [...this.tail, ...rest.subarray(Math.max(0, rest.length - 3))].slice(-3);
      if (this.held > this.maxEventBytes) {
        this.overflowed = true;
        return run.length > 0 ? run : null;
      }
    }
    return run;
  }

  /** The bytes held (an event under way), handed over and forgotten. */
  takeHeld(): Uint8Array {
    const out = concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    this.tail = [];
    return out;
  }
}

/**
 * The events of a run that can carry what the reporter reads, each as [start, end) with its parsed data: the first
 * `early` events of the stream (ids and model) and every event with a `"usage"` member whose value is an object
 * (OpenAI's final chunk, Responses' terminal events, Anthropic's message_start and message_delta). The rest is never
 * decoded: a native search of the raw bytes. `nulls` gets where each `"usage": null` member is (its name's start,
 * its value's end). Returns how many early events were read.
 */
function scanRun(
  run: Uint8Array,
  early: number,
  onEvent: (start: number, end: number, data: unknown) => void,
  nulls?: (name: number, valueEnd: number) => void,
): number {
  const buf = asBuffer(run);
  let read = 0;
  let after = 0;
  for (let start = 0; read < early && start < buf.length; read++) {
    const end = nextCut(buf, start, buf.length);
    onEvent(start, end, dataOf(run.subarray(start, end)));
    after = start = end;
  }
  for (let at = buf.indexOf(USAGE); at >= 0; at = buf.indexOf(USAGE, at + USAGE.length)) {
    const value = valueAt(buf, at + USAGE.length);
    if (buf[value] === 0x7b) {
      if (at < after) continue;
      const start = lastCut(buf, at);
      const end = nextCut(buf, at, buf.length);
      onEvent(start, end, dataOf(run.subarray(start, end)));
      after = end;
    } else if (nulls && buf[value] === 0x6e && buf[value + 1] === 0x75 && buf[value + 2] === 0x6c && buf[value + 3] === 0x6c) nulls(at, value + 4);
  }
  return read;
}

/**
 * Whether an event can carry what the reporter reads (see `scanRun`): the first events of a stream and every event
 * with a `"usage"` member whose value is an object.
 */
export function mayCarryUsage(raw: Uint8Array, index: number): boolean {
  if (index < 2) return true;
  const buf = asBuffer(raw);
  for (let at = buf.indexOf(USAGE); at >= 0; at = buf.indexOf(USAGE, at + USAGE.length)) if (buf[valueAt(buf, at + USAGE.length)] === 0x7b) return true;
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
 * Reads a whole event stream, calling `onData` with the parsed data of each event that can carry usage (see
 * `scanRun`). Never throws. An event past the bound ends the reading (the reporter's copy is cancelled; the caller's
 * copy goes on untouched).
 */
export async function readEvents(stream: ReadableStream<Uint8Array>, onData: (data: unknown) => void, maxEventBytes = MAX_EVENT_BYTES): Promise<ReadOutcome> {
  const runs = new EventRuns(maxEventBytes);
  const reader = stream.getReader();
  let early = 2;
  const onEvent = (_start: number, _end: number, data: unknown) => onData(data);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const run = runs.push(value);
      if (run && run.length > 0) early -= scanRun(run, early, onEvent);
      if (runs.overflowed) {
        runs.takeHeld();
        await reader.cancel().catch(() => undefined);
        return 'oversized';
      }
    }
    const last = runs.takeHeld();
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
 * other chunk is taken out again, so the caller receives the stream it asked for. Each chunk read is cut at its last
 * blank line: the whole events before it go on at once (the same bytes, as one chunk; copied only where something is
 * taken out), the event under way waits for its end. Only the events that can carry usage are decoded and parsed.
 * An event past the bound turns the filter into a pass-through: from there on the bytes go on untouched and
 * `onOversized` is called once.
 */
export function stripAddedUsage(onData: (data: unknown) => void, onOversized: () => void = () => undefined, maxEventBytes = MAX_CHAT_CHUNK_BYTES): TransformStream<Uint8Array, Uint8Array> {
  const runs = new EventRuns(maxEventBytes);
  let passing = false;
  let early = 2;
  /** What the caller gets of a run of whole events: itself, or itself less the added usage (one copy). */
  const filter = (run: Uint8Array): Uint8Array => {
    const drop: Array<[number, number]> = [];
    const buf = asBuffer(run);
    early -= scanRun(
      run,
      early,
      (start, end, data) => {
        onData(data);
        if (isUsageOnlyChunk(data)) drop.push([start, end]);
      },
      (name, valueEnd) => {
        // `,"usage":null` (as OpenAI writes it, last) or `"usage":null,`: the member and one comma go.
        let before = name - 1;
        while (before >= 0 && (buf[before] === 0x20 || buf[before] === 0x09)) before--;
        if (buf[before] === 0x2c) return void drop.push([before, valueEnd]);
        let after = valueEnd;
        while (after < buf.length && (buf[after] === 0x20 || buf[after] === 0x09)) after++;
        if (buf[after] === 0x2c) {
          after++;
          while (after < buf.length && (buf[after] === 0x20 || buf[after] === 0x09)) after++;
          drop.push([name, after]);
        }
      },
    );
    if (drop.length === 0) return run;
    drop.sort((a, b) => a[0] - b[0]);
    const kept: Uint8Array[] = [];
    let at = 0;
    let total = 0;
    for (const [start, end] of drop) {
      if (start < at) continue; // inside a chunk dropped whole
      kept.push(run.subarray(at, start));
      total += start - at;
      at = end;
    }
    kept.push(run.subarray(at));
    total += run.length - at;
    return concat(kept, total);
  };
  return new TransformStream({
    transform(chunk, out) {
      if (passing) return out.enqueue(chunk);
      const run = runs.push(chunk);
      const kept = run && run.length > 0 ? filter(run) : null;
      if (runs.overflowed) {
        passing = true;
        onOversized();
        const held = runs.takeHeld();
        out.enqueue(kept && kept.length > 0 ? concat([kept, held], kept.length + held.length) : held);
      } else if (kept && kept.length > 0) out.enqueue(kept);
    },
    flush(out) {
      if (passing) return;
      const last = runs.takeHeld();
      const kept = last.length > 0 ? filter(last) : null;
      if (kept && kept.length > 0) out.enqueue(kept);
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
  if (!raw.includes('"usage"')) return raw;
  return raw.replace(/,\s*"usage"\s*:\s*null(?=\s*[,}])/, '').replace(/"usage"\s*:\s*null\s*,\s*/, '');
}
