/**
 * Ready-to-paste code for a new sending key, run as is by test/integration/snippets.test.ts: the reporter for Node
 * (it wraps the OpenAI SDK), and curl and Python that send one event themselves. Each names the environment
 * variable it reads the provider key from and stops with a clear message when it is unset; the key is hashed
 * (SHA-256) where it runs and only its last 4 characters leave as the hint; every run sends a fresh requestId.
 */
export interface Snippet {
  /** The tab's name. */
  label: string;
  /** What to run it with, said above the code. */
  how: string;
  code: string;
}

/** The provider key's variable and the one made-up call the curl and Python snippets report. */
const KEY_VARIABLE = 'OPENAI_API_KEY';
const UNSET = `Set ${KEY_VARIABLE} to the OpenAI key whose spend this is (only its SHA-256 and last 4 characters are sent).`;

export function snippets(origin: string, ingestKey: string): Snippet[] {
  const api = `${origin}/api`;
  return [
    {
      label: 'Node (reporter)',
      how: 'Save as quickstart.mjs, then: npm install openai @burnrate/reporter && node quickstart.mjs',
      code: [
        `import OpenAI from 'openai';`,
        `import { createReporter } from '@burnrate/reporter';`,
        ``,
        `if (!process.env.${KEY_VARIABLE}) throw new Error(${JSON.stringify(UNSET)});`,
        `const reporter = createReporter({ ingestKey: '${ingestKey}', baseUrl: '${api}' });`,
        `const openai = new OpenAI({ fetch: reporter.fetch });`,
        `const reply = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] });`,
        `console.log(reply.choices[0].message.content);`,
        `await reporter.close();`,
        `console.log('Burnrate:', reporter.stats());`,
      ].join('\n'),
    },
    {
      label: 'curl',
      how: 'Paste into bash (Linux or macOS). It reports one made-up call of 1,200 input and 300 output tokens.',
      code: [
        `: "\${${KEY_VARIABLE}:?${UNSET}}"`,
        `KEY_HASH=$(printf %s "$${KEY_VARIABLE}" | { sha256sum 2>/dev/null || shasum -a 256; } | cut -d' ' -f1)`,
        `KEY_HINT=$(printf %s "$${KEY_VARIABLE}" | tail -c 4)`,
        `REQUEST_ID="req-$(date +%s)-$RANDOM$RANDOM"`,
        `curl -sS -X POST '${api}/ingest' \\`,
        `  -H 'content-type: application/json' \\`,
        `  -H 'x-api-key: ${ingestKey}' \\`,
        `  -d '{"events":[{"requestId":"'"$REQUEST_ID"'","keyHash":"'"$KEY_HASH"'","keyHint":"'"$KEY_HINT"'","provider":"openai","model":"gpt-4o-mini","inputTokens":1200,"outputTokens":300}]}'`,
        `echo`,
      ].join('\n'),
    },
    {
      label: 'Python (requests)',
      how: 'Save as send.py, then: pip install requests && python3 send.py',
      code: [
        `import hashlib, os, sys, uuid`,
        `import requests`,
        ``,
        `key = os.environ.get("${KEY_VARIABLE}")`,
        `if not key:`,
        `    sys.exit(${JSON.stringify(UNSET)})`,
        `event = {`,
        `    "requestId": str(uuid.uuid4()),`,
        `    "keyHash": hashlib.sha256(key.encode()).hexdigest(),`,
        `    "keyHint": key[-4:],`,
        `    "provider": "openai",`,
        `    "model": "gpt-4o-mini",`,
        `    "inputTokens": 1200,`,
        `    "outputTokens": 300,`,
        `}`,
        `res = requests.post("${api}/ingest", json={"events": [event]}, headers={"x-api-key": "${ingestKey}"}, timeout=10)`,
        `print(res.status_code, res.json())`,
      ].join('\n'),
    },
  ];
}
