/**
 * A sync of a connection of any provider: every provider's kit, and its limits phase with every provider's lever run
 * in the same process right after the import. What the local stack's one sync queue, the tests and the benches run; in
 * AWS each provider has a worker of its own (shared/sync/worker.ts), which bundles only its provider's client and
 * queues the limits phase for its provider's limits function (shared/sync/limits.ts).
 */
import type { ProviderKits } from '#shared/connections/kit.ts';
import { anthropicKit } from '#shared/connections/kits/anthropic.ts';
import { openAiKit } from '#shared/connections/kits/openai.ts';
import { openRouterKit } from '#shared/connections/kits/openrouter.ts';
import { syncConnection as syncWith, type SyncOptions } from '#shared/connections/sync.ts';
import { inlineHooks } from '#shared/sync/hooks.ts';
import { leverHooks, type LeverFactories } from '#shared/sync/levers.ts';
import { anthropicLever, openAiLever, openRouterLever } from '#shared/enforcement/levers.ts';

export type { SyncResult } from '#shared/connections/sync.ts';
export { REREAD_DAYS } from '#shared/connections/sync.ts';
export { HOT_SYNC_INTERVAL_MS } from '#shared/sync/levers.ts';

export const ALL_KITS: ProviderKits = { openai: openAiKit, anthropic: anthropicKit, openrouter: openRouterKit };
export const ALL_LEVERS: LeverFactories = { openai: openAiLever, anthropic: anthropicLever, openrouter: openRouterLever };
/** The hooks of a sync that pulls its levers itself (the local stack's one worker: functions/connections/worker.ts). */
export const ALL_HOOKS = inlineHooks(leverHooks(ALL_LEVERS));
const hooks = ALL_HOOKS;

export function syncConnection(accountId: string, connectionId: string, options: Partial<SyncOptions> = {}) {
  return syncWith(accountId, connectionId, { kits: ALL_KITS, hooks, ...options });
}
