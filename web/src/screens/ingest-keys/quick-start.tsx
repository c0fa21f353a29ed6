/**
 * A new sending key as the Sending keys and Get started screens show it: the secret once, with a copy button, and the
 * snippets that send with it (snippets.ts) as tabs — Node with the reporter first.
 */
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { CopyButton } from '../../ui/copy.tsx';
import { snippets } from './snippets.ts';

/** The one-time secret of a sending key, and what the screen puts under it (the quick start, a Done button). */
export function SecretCard({ secret, level = 2, children }: { secret: string; level?: 2 | 3; children?: ComponentChildren }) {
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <div class="card" aria-labelledby="new-key-title">
      <Heading id="new-key-title" style={{ marginTop: 0 }}>
        Your new sending key
      </Heading>
      <p>Copy it now: it is shown only once.</p>
      <p class="secret" data-testid="ingest-secret">
        {secret}
      </p>
      <p class="actions">
        <CopyButton text={secret} label="Copy the key" />
      </p>
      {children}
    </div>
  );
}

const NAMES: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic' };

/** Why the quick start reports another provider than OpenAI: events of a connected provider are refused. */
function RefusedNote({ connected }: { connected: readonly string[] }) {
  const names = (['openai', 'anthropic'] as const).filter((p) => connected.includes(p)).map((p) => NAMES[p]!);
  if (names.length === 0) return null;
  const both = names.length === 2;
  return (
    <p class="note" data-testid="refused-note">
      {names.join(' and ')} {both ? 'are' : 'is'} connected: {both ? 'their' : 'its'} spend comes from the connection, and events about {names.join(' or ')}{' '}
      keys sent from code are refused (<code>provider_connected</code>), so nothing counts twice.{' '}
      {both
        ? 'Send from code the spend of other providers: the snippets below report a Mistral call (the Node reporter wraps only the OpenAI and Anthropic SDKs).'
        : 'The snippets below report an Anthropic call instead.'}
    </p>
  );
}

/**
 * The snippets for `ingestKey` as WAI-ARIA tabs (arrow keys, Home and End move between them), each with what to run
 * it with and a copy button.
 */
export function QuickStart({ ingestKey, connected = [] }: { ingestKey: string; connected?: readonly string[] | undefined }) {
  const code = snippets(location.origin, ingestKey, connected);
  const [tab, setTab] = useState(0);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const select = (i: number) => {
    const next = (i + code.length) % code.length;
    setTab(next);
    tabs.current[next]?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const to = { ArrowRight: tab + 1, ArrowLeft: tab - 1, Home: 0, End: code.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    select(to);
  };
  const shown = code[Math.min(tab, code.length - 1)]!;
  return (
    <div class="quick-start">
      <RefusedNote connected={connected} />
      <div class="tabs" role="tablist" aria-label="Language" onKeyDown={onKeyDown}>
        {code.map(({ label }, i) => (
          <button
            type="button"
            role="tab"
            key={label}
            id={`snippet-tab-${i}`}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            aria-selected={i === tab}
            aria-controls="snippet-panel"
            tabIndex={i === tab ? 0 : -1}
            class={i === tab ? undefined : 'secondary'}
            onClick={() => setTab(i)}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="snippet-panel" aria-labelledby={`snippet-tab-${tab}`}>
        <p class="muted">{shown.how}</p>
        <pre tabIndex={0} aria-label={`${shown.label} snippet`}>
          <code>{shown.code}</code>
        </pre>
        <p class="actions">
          <CopyButton text={shown.code} label="Copy the snippet" />
        </p>
      </div>
    </div>
  );
}
