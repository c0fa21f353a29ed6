/**
 * The dashboard names a key as docs/features/budgets-and-alerts.md alert texts do: its label, else the provider's name
 * of the key, else its hint, else the first 12 characters of its hash; and says where its spend comes from.
 */
import { describe, expect, it } from 'vitest';
import { keyName, projectWords, providerStatusWords, requestsUnknown, sourceWords } from '../../web/src/ui/key-name.ts';

const hash = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

describe('keyName', () => {
  it('takes the label first', () => {
    expect(keyName({ hash, label: 'Search bot', hint: 'o7Qa' })).toBe('Search bot');
  });
  it('else the provider’s name of a connection’s key, before its hint', () => {
    expect(keyName({ hash, label: 'Search bot', name: 'web-prod', hint: 'sk-abc...def' })).toBe('Search bot');
    expect(keyName({ hash, label: null, name: 'web-prod', hint: 'sk-abc...def' })).toBe('web-prod');
  });
  it('else the hint (shown as the key’s tail)', () => {
    expect(keyName({ hash, label: null, hint: 'o7Qa' })).toBe('…o7Qa');
    // A hint that marks its own gap is not given a second one (was "…sk-…b9d5").
    expect(keyName({ hash, label: null, hint: 'sk-…b9d5' })).toBe('sk-…b9d5');
    expect(keyName({ hash, label: null, hint: 'sk-...a1B2' })).toBe('sk-...a1B2');
  });
  it('else the first 12 characters of the hash', () => {
    expect(keyName({ hash, label: null, hint: null })).toBe('9f86d081884c');
  });

  it('names a connection key’s project or workspace once', () => {
    expect(projectWords({ provider: 'openai', project: { id: 'proj_1', name: 'Web app' } })).toBe('project Web app');
    expect(projectWords({ provider: 'anthropic', project: { id: 'wrkspc_1', name: 'Research' } })).toBe('workspace Research');
    expect(projectWords({ provider: 'anthropic', project: { id: 'default', name: 'Default workspace' } })).toBe('Default workspace');
    expect(projectWords({ provider: 'openai', project: { id: 'proj_2', name: 'Default project' } })).toBe('Default project');
    expect(projectWords({ provider: 'openai', project: null })).toBeNull();
  });

  it('says where the spend comes from and a provider status worth saying', () => {
    expect(sourceWords({ source: 'connection', provider: 'anthropic' })).toBe('Anthropic connection');
    expect(sourceWords({ source: 'ingest', provider: 'openai' })).toBe('sent in events');
    expect(providerStatusWords({ providerStatus: 'deleted', provider: 'openai' })).toBe('deleted at OpenAI');
    expect(providerStatusWords({ providerStatus: 'active', provider: 'openai' })).toBeNull();
    expect(providerStatusWords({ providerStatus: null, provider: 'google' })).toBeNull();
  });
  it('has no request count for keys of an Anthropic connection only', () => {
    expect(requestsUnknown({ source: 'connection', provider: 'anthropic' })).toBe(true);
    expect(requestsUnknown({ source: 'connection', provider: 'openai' })).toBe(false);
    expect(requestsUnknown({ source: 'ingest', provider: 'anthropic' })).toBe(false);
  });
});
