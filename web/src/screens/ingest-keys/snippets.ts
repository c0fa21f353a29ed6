/**
 * Ready-to-paste code for a new sending key, run as is by test/integration/reporter.test.ts: the reporter for Node
 * (it wraps the OpenAI SDK, or Anthropic's while OpenAI is connected), and curl and Python that send one event
 * themselves. Each names the environment
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

/** What a snippet reports: a provider whose events Burnrate takes (a connected provider's events are refused). */
interface Target {
  provider: string;
  /** How people write it. */
  name: string;
  keyVariable: string;
  model: string;
}

const TARGETS: Record<'openai' | 'anthropic' | 'other', Target> = {
  openai: { provider: 'openai', name: 'OpenAI', keyVariable: 'OPENAI_API_KEY', model: 'gpt-4o-mini' },
  anthropic: { provider: 'anthropic', name: 'Anthropic', keyVariable: 'ANTHROPIC_API_KEY', model: 'claude-3-5-haiku-latest' },
  other: { provider: 'mistral', name: 'Mistral', keyVariable: 'MISTRAL_API_KEY', model: 'mistral-small-latest' },
};

/**
 * The line that installs the reporter: `@burnrate/reporter` is not on a registry, so it comes from a clone of
 * Burnrate's repository (its `reporter/` folder), or from the tarball `npm pack` writes there.
 */
const nodeHow = (sdk: string) =>
  `Save as quickstart.mjs, then: npm install ${sdk} <path to your Burnrate clone>/reporter && node quickstart.mjs — @burnrate/reporter is not on npm: ` +
  `install it from the reporter/ folder of Burnrate's repository as shown, or run npm pack in that folder and npm install the .tgz it writes.`;

/**
 * The snippets for `ingestKey`, for the first provider whose events Burnrate takes: OpenAI, else Anthropic (OpenAI
 * connected), else a provider Burnrate has no connection for (both connected: no Node tab, the reporter wraps only
 * their SDKs). `connected`: the providers the account has a connection of.
 */
export function snippets(origin: string, ingestKey: string, connected: readonly string[] = []): Snippet[] {
  const api = `${origin}/api`;
  const open = (['openai', 'anthropic'] as const).find((p) => !connected.includes(p));
  const target = TARGETS[open ?? 'other'];
  const KEY_VARIABLE = target.keyVariable;
  const UNSET = `Set ${KEY_VARIABLE} to the ${target.name} key whose spend this is (only its SHA-256 and last 4 characters are sent).`;
  const node: Snippet[] =
    open === 'openai'
      ? [
          {
            label: 'Node (reporter)',
            how: nodeHow('openai'),
            code: [
              `import OpenAI from 'openai';`,
              `import { createReporter } from '@burnrate/reporter';`,
              ``,
              `if (!process.env.${KEY_VARIABLE}) throw new Error(${JSON.stringify(UNSET)});`,
              `const reporter = createReporter({ ingestKey: '${ingestKey}', baseUrl: '${api}' });`,
              `const openai = new OpenAI({ fetch: reporter.fetch });`,
              `const reply = await openai.chat.completions.create({ model: '${target.model}', messages: [{ role: 'user', content: 'Say hello' }] });`,
              `console.log(reply.choices[0].message.content);`,
              `await reporter.close();`,
              `console.log('Burnrate:', reporter.stats());`,
            ].join('\n'),
          },
        ]
      : open === 'anthropic'
        ? [
            {
              label: 'Node (reporter)',
              how: nodeHow('@anthropic-ai/sdk'),
              code: [
                `import Anthropic from '@anthropic-ai/sdk';`,
                `import { createReporter } from '@burnrate/reporter';`,
                ``,
                `if (!process.env.${KEY_VARIABLE}) throw new Error(${JSON.stringify(UNSET)});`,
                `const reporter = createReporter({ ingestKey: '${ingestKey}', baseUrl: '${api}' });`,
                `const anthropic = new Anthropic({ fetch: reporter.fetch });`,
                `const reply = await anthropic.messages.create({ model: '${target.model}', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });`,
                `console.log(reply.content[0].text);`,
                `await reporter.close();`,
                `console.log('Burnrate:', reporter.stats());`,
              ].join('\n'),
            },
          ]
        : [];
  return [
    ...node,
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
        `  -d '{"events":[{"requestId":"'"$REQUEST_ID"'","keyHash":"'"$KEY_HASH"'","keyHint":"'"$KEY_HINT"'","provider":"${target.provider}","model":"${target.model}","inputTokens":1200,"outputTokens":300}]}'`,
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
        `    "provider": "${target.provider}",`,
        `    "model": "${target.model}",`,
        `    "inputTokens": 1200,`,
        `    "outputTokens": 300,`,
        `}`,
        `res = requests.post("${api}/ingest", json={"events": [event]}, headers={"x-api-key": "${ingestKey}"}, timeout=10)`,
        `print(res.status_code, res.json())`,
      ].join('\n'),
    },
  ];
}
