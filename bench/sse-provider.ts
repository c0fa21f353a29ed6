/**
 * The provider of `npm run bench:reporter`'s streams, in a process of its own (as a provider is never in the caller's
 * process, its work is not counted in the caller's time and CPU): OpenAI-shaped chat streams, with `"usage":null` in
 * every chunk and a final usage chunk when the request asks for `stream_options.include_usage`, as OpenAI sends them.
 * `x-bench-stream` names the stream:
 * - `events`: 200,000 chunks, written in 64 KiB writes (a provider's fast stream: many events per read);
 * - `paced`: 20,000 chunks, one write each on its own turn of the event loop (one event per read);
 * - `huge`: one 32 MB event without a blank line, then the usage chunk, in 64 KiB writes.
 * Sends its port to the parent once listening.
 */
import { createServer, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

const chunk = (i: number, usage: boolean) =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"token ${String(i).padStart(6, '0')}"},"finish_reason":null}]${usage ? ',"usage":null' : ''}}\n\n`;
const usageChunk = 'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}\n\n';
const DONE = 'data: [DONE]\n\n';

/** The stream's events, as they are written (one Buffer per event), with and without the usage option. */
function events(n: number, usage: boolean): Buffer[] {
  const out = Array.from({ length: n }, (_, i) => Buffer.from(chunk(i, usage)));
  if (usage) out.push(Buffer.from(usageChunk));
  out.push(Buffer.from(DONE));
  return out;
}

const streams = {
  events: [false, true].map((usage) => Buffer.concat(events(200_000, usage))),
  paced: [false, true].map((usage) => events(20_000, usage)),
  huge: Buffer.concat([Buffer.from('data: {"choices":[{"delta":{"content":"'), Buffer.alloc(32 * 1024 * 1024, 120), Buffer.from('"}}]}\n\n'), Buffer.from(usageChunk + DONE)]),
};

async function write64k(res: ServerResponse, body: Buffer): Promise<void> {
  for (let at = 0; at < body.length; at += 64 * 1024) if (!res.write(body.subarray(at, at + 64 * 1024))) await once(res, 'drain');
}

const server = createServer((req, res) => {
  let text = '';
  req.on('data', (c) => (text += c));
  req.on('end', async () => {
    const usage = JSON.parse(text).stream_options?.include_usage === true ? 1 : 0;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const name = req.headers['x-bench-stream'];
    if (name === 'huge') await write64k(res, streams.huge);
    else if (name === 'paced') {
      for (const event of streams.paced[usage]!) {
        if (!res.write(event)) await once(res, 'drain');
        await new Promise((resolve) => setImmediate(resolve));
      }
    } else await write64k(res, streams.events[usage]!);
    res.end();
  });
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
process.send!({ port: (server.address() as AddressInfo).port, sizes: { events: streams.events.map((b) => b.length), paced: streams.paced.map((e) => e.reduce((n, b) => n + b.length, 0)), huge: streams.huge.length } });
