/** Ready-to-paste code that sends one event with an ingest key to this server. */
export function snippets(origin: string, key: string): [string, string][] {
  const url = `${origin}/api/ingest`;
  const event = {
    requestId: 'req-0001',
    keyHash: '<sha256 hex of your provider key>',
    keyHint: 'x7Qa',
    provider: 'openai',
    model: 'gpt-4o-mini',
    inputTokens: 1200,
    outputTokens: 300,
  };
  const json = JSON.stringify({ events: [event] });
  return [
    ['curl', `curl -X POST ${url} \\\n  -H 'content-type: application/json' \\\n  -H 'x-api-key: ${key}' \\\n  -d '${json}'`],
    [
      'Node (fetch)',
      `import { createHash } from 'node:crypto';\n\nconst keyHash = createHash('sha256').update(process.env.OPENAI_API_KEY).digest('hex');\n` +
        `const res = await fetch('${url}', {\n  method: 'POST',\n  headers: { 'content-type': 'application/json', 'x-api-key': '${key}' },\n` +
        `  body: JSON.stringify({ events: [{ ...${JSON.stringify({ ...event, keyHash: undefined })}, keyHash }] }),\n});\nconsole.log(res.status, await res.json());`,
    ],
    [
      'Python (requests)',
      `import hashlib, os, requests\n\nkey_hash = hashlib.sha256(os.environ["OPENAI_API_KEY"].encode()).hexdigest()\n` +
        `event = ${JSON.stringify({ ...event, keyHash: 'KEY_HASH' })}\nevent["keyHash"] = key_hash\n` +
        `res = requests.post("${url}", json={"events": [event]}, headers={"x-api-key": "${key}"})\nprint(res.status_code, res.json())`,
    ],
  ];
}
