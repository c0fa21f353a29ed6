/** A stopped key's lever in words (`stoppedBy[].lever`): pure, so a unit test reads it without a browser. */
import { providerWords } from './format.ts';

/** The lever in words: `set inactive at Anthropic`, `disabled at OpenRouter`, `its project’s spend limit at OpenAI is reached`, `its calls refused by the reporter`. */
export function leverWords(lever: string): string {
  if (lever === 'reporter') return 'its calls refused by the reporter';
  const m = /^(.+)_(key|project_limit|key_limit|workspace_cap)$/.exec(lever);
  if (!m) return lever;
  const provider = providerWords(m[1]!);
  switch (m[2]) {
    case 'key':
      return m[1] === 'openrouter' ? `disabled at ${provider}` : m[1] === 'anthropic' ? `set inactive at ${provider}` : `switched off at ${provider}`;
    case 'project_limit':
      return `its ${m[1] === 'anthropic' ? 'workspace' : 'project'}’s spend limit at ${provider} is reached`;
    case 'key_limit':
      return `its credit limit at ${provider} is reached`;
    default:
      return `its workspace’s spend limit at ${provider} is reached`;
  }
}
