import { Link } from '../../router.tsx';
import { Screen } from '../../ui/states.tsx';

export function NotFound() {
  document.title = 'Not found · Burnrate';
  return (
    <Screen title="Not found">
      <p>
        There is no page here. <Link href="/">Go to the overview</Link>.
      </p>
    </Screen>
  );
}
