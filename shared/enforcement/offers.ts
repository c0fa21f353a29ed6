/**
 * What each provider's lever can do, known without an admin key and without the lever's client: the decisions, the
 * budget form and the 400s read it, in ingestion and the API too, which never pull a lever. The levers themselves
 * (levers.ts: the provider calls) are built only where an admin key is open, in the sync worker.
 */
export interface LeverOffer {
  keySwitch: boolean;
  projectLimit: boolean;
  /** How people call the key switch (`set inactive`, `disabled`). */
  keySwitchWords: string;
  /** A key's own spend limit the provider enforces (OpenRouter `limit` + `limit_reset`). */
  keyLimit?: boolean;
  /** A workspace's spend limit the provider enforces (Anthropic Spend Limits API, early access). */
  workspaceCap?: boolean;
}

const OFFERS: ReadonlyMap<string, LeverOffer> = new Map([
  ['anthropic', { keySwitch: true, projectLimit: false, keySwitchWords: 'set inactive', workspaceCap: true }],
  ['openai', { keySwitch: false, projectLimit: true, keySwitchWords: '' }],
  ['openrouter', { keySwitch: true, projectLimit: false, keySwitchWords: 'disabled', keyLimit: true }],
]);

export const leverOffer = (provider: string): LeverOffer | undefined => OFFERS.get(provider);
