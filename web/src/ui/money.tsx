/** An amount as people read it (`money`), the exact value (every micro-dollar) as its title and accessible description. */
import { exactMoney, money } from './format.ts';

export function Money({ value, testId }: { value: number; testId?: string }) {
  const shown = money(value);
  const exact = exactMoney(value);
  return (
    <data value={String(value)} title={exact === shown ? undefined : `Exactly ${exact}`} data-testid={testId}>
      {shown}
    </data>
  );
}
