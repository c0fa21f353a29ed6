/** The signed-in user and account (GET /auth/me), and what their role lets them do. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Schemas } from '../api/client.ts';

export type Me = Schemas['Me'];
type Role = Me['user']['role'];
const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

export const MeContext = createContext<{ me: Me; reload: () => void } | undefined>(undefined);

export function useMe(): { me: Me; reload: () => void } {
  const value = useContext(MeContext);
  if (!value) throw new Error('useMe outside a signed-in screen');
  return value;
}

/** Whether the signed-in user's role is at least `role` (a viewer sees no button it may not use). */
export function useCan(role: Role): boolean {
  return RANK[useMe().me.user.role] >= RANK[role];
}
