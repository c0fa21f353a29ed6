/**
 * Server-sent events, read as they pass to the caller, in one stage (`watchStream`): each chunk the provider sends is
 * scanned where it lies and handed on. Two watchers: `UsageReader` reads the usage and hands every chunk on as it came;
 * `UsageStripper`, for OpenAI chat streams where the reporter itself asked for the usage chunk the caller did not ask
 * for, also takes that chunk and the `"usage":null` members back out.
 *
 * The cut works on bytes (a blank line is ASCII, so a cut never splits a UTF-8 character), with the platform's native
 * byte searches, and only the events that can carry usage are decoded and parsed: the cost is linear in the stream,
 * whatever its events' sizes. What the parser holds is bounded: an event that grows past its bound without its blank
 * line stops the parsing of that response (the response is counted as oversized and its bytes go on to the caller
 * untouched).
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
const QUOTE = 0x22;

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

const decoder = new TextDecoder();

/**
 * The platform's native byte searches, called on the chunks as they are (a Buffer view made per search would cost an
 * allocation each: a chunk is often one small event).
 */
const nativeIndexOf = Buffer.prototype.indexOf;
const nativeLastIndexOf = Buffer.prototype.lastIndexOf;
const indexOf = (bytes: Uint8Array, needle: Uint8Array | number, from = 0): number => nativeIndexOf.call(bytes as Buffer, needle, from);
const lastIndexOf = (bytes: Uint8Array, needle: Uint8Array, from: number): number => nativeLastIndexOf.call(bytes as Buffer, needle, from);

/**
 * The needles, as bytes once (a string needle is re-encoded by every `indexOf`). `usage"` rather than `"usage"`: the
 * native search keys on a needle's first byte, and a quote is in every few bytes of JSON (10 times slower); the quote
 * before it is checked by hand.
 */
const USAGE_TAIL = Buffer.from('usage"');
/** `"usage":{` and `"usage": {`, searched for by their tails for the same reason (a `g` is rare, a quote is not). */
const OBJECT_USAGE = Buffer.from('ge":{');
const OBJECT_USAGE_SPACED = Buffer.from('ge": {');
const LFLF = Buffer.from('\n\n');
const BLANK_LINES = [LFLF, Buffer.from('\r\r'), Buffer.from('\r\n\r\n')];

const NONE: Uint8Array[] = [];

/** Whether `buf[from, to)` holds a carriage return (a native search of that stretch only). */
function hasCr(buf: Uint8Array, from: number, to: number): boolean {
  if (from >= to) return false;
  const at = to === buf.length ? indexOf(buf, CR, from) : indexOf(buf.subarray(from, to), CR);
  return at >= 0;
}

/**
 * Where the blank line that ends the last complete event in `buf[0, before)` ends (0 when there is none). Blank lines
 * are `\n\n`, `\r\r` or `\r\n\r\n`. The providers end lines with `\n`: the last `\n\n` is found searching back from the
 * end (a few bytes away), and the other spellings are looked for only when a carriage return follows it.
 */
function lastCut(buf: Uint8Array, before = buf.length): number {
  // Most often the chunk ends with its last event.
  if (before >= 2 && buf[before - 1] === LF && buf[before - 2] === LF) return before;
  const lf = before >= 2 ? lastIndexOf(buf, LFLF, before - 2) : -1;
  if (!hasCr(buf, Math.max(lf, 0), before)) return lf >= 0 ? lf + 2 : 0;
  let cut = 0;
  for (const blank of BLANK_LINES) {
    const at = before - blank.length < 0 ? -1 : lastIndexOf(buf, blank, before - blank.length);
    if (at >= 0) cut = Math.max(cut, at + blank.length);
  }
  return cut;
}

/** Where the first blank line that starts at or after `from` ends, or -1 when there is none. */
function firstCut(buf: Uint8Array, from: number): number {
  const lf = indexOf(buf, LFLF, from);
  const lfEnd = lf >= 0 ? lf + 2 : buf.length;
  if (!hasCr(buf, from, lfEnd)) return lf >= 0 ? lfEnd : -1;
  let cut = -1;
  for (const blank of BLANK_LINES) {
    const at = indexOf(buf, blank, from);
    if (at >= 0 && (cut < 0 || at + blank.length < cut)) cut = at + blank.length;
  }
  return cut;
}

/** The first byte after `at` that is not JSON white space or a colon. */
function valueAt(buf: Uint8Array, at: number): number {
  while (at < buf.length && (buf[at] === 0x20 || buf[at] === 0x3a || buf[at] === 0x09 || buf[at] === 0x0a || buf[at] === 0x0d)) at++;
  return at;
}

/**
 * A byte stream cut into runs of whole events, cheaply: each chunk is searched (natively) for its last blank line,
 * and the event held from earlier chunks for its end (its first blank line, in the chunk or across the seam). The
 * chunk's whole events come out as runs: the held event completed (held bytes and the chunk's head, copied together),
 * then the chunk's other whole events (a view of the chunk, never copied). The rest is held for the next chunk. Past
 * `maxEventBytes` held, the stream is no longer cut (`overflowed`).
 */
export class EventRuns {
  private parts: Uint8Array[] = [];
  private held = 0;
  /** The last bytes held (up to 3), for a blank line that straddles two chunks. */
  private tail: number[] = [];
  overflowed = false;

  constructor(private readonly maxEventBytes: number) {}

  /** The runs of whole events completed by `chunk` (none while an event is under way, or once overflowed). */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.overflowed) return NONE;
    let last = lastCut(chunk);
    // Most often the chunk is whole events: it is the run.
    if (this.held === 0 && last === chunk.length) return [chunk];
    const runs: Uint8Array[] = [];
    if (this.held > 0) {
      // Only the new chunk is searched (and the seam with what is held): the cost stays linear in the stream.
      let first = last > 0 ? firstCut(chunk, 0) : -1;
      // A blank line across the seam takes the last byte held: a line break.
      const lastHeld = this.tail[this.tail.length - 1];
      if (lastHeld === LF || lastHeld === CR) {
        const seam = Buffer.from([...this.tail, ...chunk.subarray(0, 3)]);
        const across = firstCut(seam, 0) - this.tail.length;
        if (across > 0 && (first < 0 || across < first)) first = across;
      }
      if (first > 0) {
        runs.push(concat([...this.parts, chunk.subarray(0, first)], this.held + first));
        this.parts = [];
        this.held = 0;
        this.tail = [];
        last = Math.max(last, first);
        if (last > first) runs.push(chunk.subarray(first, last));
      }
    } else if (last > 0) runs.push(chunk.subarray(0, last));
    if (last < chunk.length) {
      // Kept as a copy: the caller may reuse the chunk's memory once it has it.
      const rest = chunk.slice(last);
      this.parts.push(rest);
      this.held += rest.length;
      this.tail = rest.length >= 3 ? [rest[rest.length - 3]!, rest[rest.length - 2]!, rest[rest.length - 1]!] : [...this.tail, ...rest].slice(-3);
      if (this.held > this.maxEventBytes) this.overflowed = true;
    }
    return runs;
  }

  /** Forgets the bytes held (without joining them). */
  forget(): void {
    this.parts = [];
    this.held = 0;
    this.tail = [];
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
 * decoded: a native search of the raw bytes. With `nulls` (the filter, which must find every `"usage": null` member:
 * its name's start and its value's end), every `"usage"` is looked at; without, only `"usage":{` and `"usage": {` (the
 * spellings of compact JSON and of Python's json module) are searched for, so that a stream with `"usage":null` in
 * each event costs a native search of its bytes per spelling, not a step per event.
 * Returns how many early events were read.
 */
function scanRun(
  run: Uint8Array,
  early: number,
  onEvent: (start: number, end: number, data: unknown) => void,
  nulls?: (name: number, valueEnd: number) => void,
): number {
  const buf = run;
  let read = 0;
  let after = 0;
  for (let start = 0; read < early && start < buf.length; read++) {
    const cut = firstCut(buf, start);
    const end = cut < 0 ? buf.length : cut;
    onEvent(start, end, dataOf(run.subarray(start, end)));
    after = start = end;
  }
  /** The event around the `"usage"` at `at`, unless it was read already. */
  const object = (at: number) => {
    if (at < after) return;
    const start = lastCut(buf, at);
    const cut = firstCut(buf, at);
    const end = cut < 0 ? buf.length : cut;
    onEvent(start, end, dataOf(run.subarray(start, end)));
    after = end;
  };
  if (!nulls) {
    // Both spellings, in the order they come (Anthropic's message_delta adds to its message_start).
    let compact = indexOf(buf, OBJECT_USAGE);
    let spaced = indexOf(buf, OBJECT_USAGE_SPACED);
    while (compact >= 0 || spaced >= 0) {
      const isCompact = spaced < 0 || (compact >= 0 && compact < spaced);
      const hit = isCompact ? compact : spaced;
      if (isCompact) compact = indexOf(buf, OBJECT_USAGE, hit + 1);
      else spaced = indexOf(buf, OBJECT_USAGE_SPACED, hit + 1);
      const at = hit - 4; // where `"usa` must be
      if (at >= 0 && buf[at] === QUOTE && buf[at + 1] === 0x75 && buf[at + 2] === 0x73 && buf[at + 3] === 0x61) object(at);
    }
    return read;
  }
  for (let hit = indexOf(buf, USAGE_TAIL); hit >= 0; hit = indexOf(buf, USAGE_TAIL, hit + USAGE_TAIL.length)) {
    const at = hit - 1;
    if (at < 0 || buf[at] !== QUOTE) continue;
    const value = valueAt(buf, hit + USAGE_TAIL.length);
    if (buf[value] === 0x7b) object(at);
    else if (buf[value] === 0x6e && buf[value + 1] === 0x75 && buf[value + 2] === 0x6c && buf[value + 3] === 0x6c) nulls(at, value + 4);
  }
  return read;
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

/** What a stream's watcher does with each chunk read: reads it, and gives the caller's bytes to `out` (if any yet). */
export interface Watcher {
  push(chunk: Uint8Array, out: (bytes: Uint8Array) => void): void;
  /** The stream ended: what is left goes to `out`. */
  end(out: (bytes: Uint8Array) => void): void;
  /** An event outgrew the bound: the rest of the stream was passed on unread. */
  readonly oversized: boolean;
}

/**
 * Reads the usage of a stream that goes on to the caller unchanged: every chunk is handed on as it came, right after
 * it is scanned. `onData` gets the parsed data of each event that can carry usage (see `scanRun`).
 */
export class UsageReader implements Watcher {
  private readonly runs: EventRuns;
  private early = 2;
  private readonly onEvent = (_start: number, _end: number, data: unknown) => this.onData(data);

  constructor(
    private readonly onData: (data: unknown) => void,
    maxEventBytes = MAX_EVENT_BYTES,
  ) {
    this.runs = new EventRuns(maxEventBytes);
  }

  get oversized(): boolean {
    return this.runs.overflowed;
  }

  push(chunk: Uint8Array, out: (bytes: Uint8Array) => void): void {
    if (!this.runs.overflowed) {
      for (const run of this.runs.push(chunk)) this.early -= scanRun(run, this.early, this.onEvent);
      if (this.runs.overflowed) this.runs.forget();
    }
    out(chunk);
  }

  end(): void {
    if (this.runs.overflowed) return;
    const last = this.runs.takeHeld();
    if (last.length > 0) this.onData(dataOf(last));
  }
}

/**
 * The filter of OpenAI chat streams where the reporter added `stream_options.include_usage`: the final usage chunk
 * (`choices: []` with a `usage` object) is read and dropped, and the `"usage":null` that this option adds to every
 * other chunk is taken out again, so the caller receives the stream it asked for. The whole events of a chunk go on at
 * once (the same bytes, less what is taken out); the event under way waits for its end. An event
 * past the bound turns the filter into a pass-through: from there on the bytes go on untouched.
 */
export class UsageStripper implements Watcher {
  private readonly runs: EventRuns;
  private early = 2;
  private readonly ownChunks: boolean;

  /**
   * `ownChunks`: the chunks read are the reporter's alone (the platform's fetch makes each afresh and nothing else
   * reads the response), so what is taken out is taken out of them in place. Otherwise (a `fetch` of the caller's,
   * which may tee the response to another reader: a clone shares its chunks) each run that changes is copied first.
   */
  constructor(
    private readonly onData: (data: unknown) => void,
    options: { ownChunks?: boolean; maxEventBytes?: number } = {},
  ) {
    this.runs = new EventRuns(options.maxEventBytes ?? MAX_CHAT_CHUNK_BYTES);
    this.ownChunks = options.ownChunks ?? false;
  }

  get oversized(): boolean {
    return this.runs.overflowed;
  }

  push(chunk: Uint8Array, out: (bytes: Uint8Array) => void): void {
    if (this.runs.overflowed) return out(chunk);
    for (const run of this.runs.push(chunk)) out(this.filter(run));
    if (this.runs.overflowed) out(this.runs.takeHeld());
  }

  end(out: (bytes: Uint8Array) => void): void {
    if (this.runs.overflowed) return;
    const last = this.runs.takeHeld();
    if (last.length > 0) out(this.filter(last));
  }

  /** Where the bytes to take out of the run being filtered are: [start, end) pairs, flat. */
  private drops: number[] = [];
  private run: Uint8Array = new Uint8Array(0);
  private readonly onEvent = (start: number, end: number, data: unknown) => {
    this.onData(data);
    if (isUsageOnlyChunk(data)) this.drops.push(start, end);
  };
  /** `,"usage":null` (as OpenAI writes it, last) or `"usage":null,`: the member and one comma go. */
  private readonly onNull = (name: number, valueEnd: number) => {
    const buf = this.run;
    let before = name - 1;
    while (before >= 0 && (buf[before] === 0x20 || buf[before] === 0x09)) before--;
    if (buf[before] === 0x2c) return void this.drops.push(before, valueEnd);
    let after = valueEnd;
    while (after < buf.length && (buf[after] === 0x20 || buf[after] === 0x09)) after++;
    if (buf[after] === 0x2c) {
      after++;
      while (after < buf.length && (buf[after] === 0x20 || buf[after] === 0x09)) after++;
      this.drops.push(name, after);
    }
  };

  /**
   * What the caller gets of a run of whole events: itself, or itself less the added usage, compacted in place (in a
   * copy of the run unless the chunks are the reporter's own).
   */
  private filter(run: Uint8Array): Uint8Array {
    this.run = run;
    this.drops.length = 0;
    this.early -= scanRun(run, this.early, this.onEvent, this.onNull);
    let drops = this.drops;
    if (drops.length === 0) return run;
    // In the order found: the first events' drops can come before the `"usage":null` members inside them.
    let ordered = true;
    for (let i = 2; i < drops.length && ordered; i += 2) ordered = drops[i - 2]! <= drops[i]!;
    if (!ordered) {
      const pairs: Array<[number, number]> = [];
      for (let i = 0; i < drops.length; i += 2) pairs.push([drops[i]!, drops[i + 1]!]);
      drops = pairs.sort((x, y) => x[0] - y[0]).flat();
    }
    if (!this.ownChunks) run = run.slice();
    let write = 0;
    let at = 0;
    for (let i = 0; i < drops.length; i += 2) {
      const start = drops[i]!;
      if (start < at) continue; // inside a chunk dropped whole
      if (start > at) {
        if (write !== at) run.copyWithin(write, at, start);
        write += start - at;
      }
      at = drops[i + 1]!;
    }
    if (at < run.length) {
      if (write !== at) run.copyWithin(write, at);
      write += run.length - at;
    }
    return run.subarray(0, write);
  }
}

function isUsageOnlyChunk(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const chunk = data as { choices?: unknown; usage?: unknown };
  return Array.isArray(chunk.choices) && chunk.choices.length === 0 && typeof chunk.usage === 'object' && chunk.usage !== null;
}

/**
 * The caller's stream, in one stage over the provider's: each read of the caller's reads the provider's stream, hands
 * the chunk to the watcher and gives the caller what the watcher gives out (reading on while it gives nothing, an
 * event being held). The provider's stream is read at the caller's pace, as plain `fetch` reads it. `onEnd` is called
 * once, when the provider's stream is over: at its end, on its error (with what was read so far), or, when the
 * caller cancels its stream, after the rest has been read here (the provider still sends it; its usage is at its end).
 */
export function watchStream(source: ReadableStream<Uint8Array>, watcher: Watcher, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let controller: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  let ended = false;
  /** Whether the read under way gave the caller something. */
  let given = false;
  const end = () => {
    if (ended) return;
    ended = true;
    try {
      onEnd();
    } catch {
      // reporting never reaches into the caller's stream
    }
  };
  const out = (bytes: Uint8Array) => {
    if (bytes.length === 0 || cancelled) return;
    controller.enqueue(bytes);
    given = true;
  };
  const discard = () => undefined;
  const read = async () => {
    given = false;
    try {
      while (!given && !cancelled) {
        const { done, value } = await reader.read();
        if (done) {
          watcher.end(out);
          if (!cancelled) controller.close();
          return end();
        }
        watcher.push(value, out);
      }
    } catch (error) {
      end();
      if (!cancelled) controller.error(error);
    }
  };
  /** After the caller's cancel: the rest is read here, for its usage. */
  const readRest = async () => {
    if (ended) return;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        watcher.push(value, discard);
      }
      watcher.end(discard);
    } catch {
      // the provider's stream failed: whatever usage was read so far is what there is
    }
    end();
  };
  /** The read under way for the caller (the reading after a cancel starts once it is over, so chunks keep their order). */
  let reading: Promise<void> = Promise.resolve();
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        reading = read();
        return reading;
      },
      cancel() {
        cancelled = true;
        void reading.then(readRest);
      },
    },
    { highWaterMark: 0 },
  );
}
