/**
 * A table of spend by name and provider (the Projects screen's projects, the Overview's top keys): each row's name
 * links to its screen, its provider in words, its spend as money.
 */
import type { ComponentChildren } from 'preact';
import { Link } from '../router.tsx';
import { providerWords } from './format.ts';
import { Money } from './money.tsx';

export interface SpendRow {
  key: string;
  name: ComponentChildren;
  href: string;
  provider: string | null;
  costUsd: number;
  current?: boolean;
}

export function SpendTable({ label, nameHeading, caption, rows }: { label: string; nameHeading: string; caption?: ComponentChildren; rows: readonly SpendRow[] }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table>
        {caption !== undefined && <caption class="muted">{caption}</caption>}
        <thead>
          <tr>
            <th scope="col">{nameHeading}</th>
            <th scope="col">Provider</th>
            <th scope="col" class="num">
              Spend
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} aria-current={r.current ? 'true' : undefined}>
              <td data-label={nameHeading}>
                <Link href={r.href}>{r.name}</Link>
              </td>
              <td data-label="Provider">{r.provider ? providerWords(r.provider) : '—'}</td>
              <td class="num" data-label="Spend">
                <Money value={r.costUsd} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
