/**
 * What stops a key, in the words the Keys list and the key page use (web/src/ui/lever-words.ts): every lever
 * `stoppedBy` names (shared/enforcement/stopped-by.ts), and an unknown one as sent.
 */
import { describe, expect, it } from 'vitest';
import { leverWords } from '../../web/src/ui/lever-words.ts';

describe('leverWords', () => {
  it('names each lever as people say it', () => {
    expect(leverWords('anthropic_key')).toBe('set inactive at Anthropic');
    expect(leverWords('openrouter_key')).toBe('disabled at OpenRouter');
    expect(leverWords('reporter')).toBe('its calls refused by the reporter');
    expect(leverWords('openai_project_limit')).toBe('its project’s spend limit at OpenAI is reached');
    expect(leverWords('anthropic_project_limit')).toBe('its workspace’s spend limit at Anthropic is reached');
    expect(leverWords('openrouter_key_limit')).toBe('its credit limit at OpenRouter is reached');
    expect(leverWords('anthropic_workspace_cap')).toBe('its workspace’s spend limit at Anthropic is reached');
    expect(leverWords('mistral_key')).toBe('switched off at Mistral');
    expect(leverWords('something_new')).toBe('something_new');
  });
});
