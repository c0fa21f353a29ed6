/**
 * The coverage notes of GET /spend (docs/features/spend-and-exports.md), shown where the figures
 * they qualify are: what is missing from them and what to do, each with a link to where it is done. Notes that make
 * the figures incomplete come first, as a notice; `estimated` (days not billed yet) is a quiet line under them.
 */
import type { Schemas } from '../api/client.ts';
import { Link } from '../router.tsx';

type Coverage = Schemas['Spend']['coverage'];
type Note = Coverage['notes'][number];

/** Where a person acts on a note. */
const ACTIONS: Partial<Record<Note['code'], { href: string; label: string }>> = {
  plan_key_limit: { href: '/billing', label: 'Upgrade' },
  plan_request_limit: { href: '/billing', label: 'Upgrade' },
  sync_failing: { href: '/connections', label: 'Fix the connection' },
  sync_pending: { href: '/connections', label: 'Connections' },
  unpriced: { href: '/prices', label: 'Set a price' },
};

export function CoverageNotes({ coverage, quiet = false }: { coverage: Coverage | undefined; quiet?: boolean }) {
  if (!coverage) return null;
  const missing = coverage.notes.filter((n) => n.code !== 'estimated');
  const estimated = coverage.notes.filter((n) => n.code === 'estimated');
  if (missing.length === 0 && (quiet || estimated.length === 0)) return null;
  return (
    <div data-testid="coverage" data-complete={String(coverage.complete)}>
      {missing.length > 0 && (
        <div class="notice warn" role="status">
          <strong>These figures are not complete.</strong>
          <ul>
            {missing.map((n) => {
              const action = ACTIONS[n.code];
              return (
                <li key={`${n.code}-${n.provider ?? ''}`} data-code={n.code}>
                  {n.message} {action && <Link href={action.href}>{action.label}</Link>}
                </li>
              );
            })}
          </ul>
        </div>
      )}
      {!quiet &&
        estimated.map((n) => (
          <p class="muted" key={`estimated-${n.provider ?? ''}`} data-code="estimated">
            {n.message}
          </p>
        ))}
    </div>
  );
}
