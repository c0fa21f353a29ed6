import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../../api/client.ts';
import { Field, Form, Select, useSubmit } from '../../ui/form.tsx';
import { when } from '../../ui/format.ts';
import { useLoad } from '../../ui/load.ts';
import { useCan, useMe } from '../../ui/me.tsx';
import { Empty, ErrorBox, Screen, Show } from '../../ui/states.tsx';

type Role = Schemas['User']['role'];
const ROLES: [Role, string][] = [
  ['admin', 'Admin'],
  ['member', 'Member'],
  ['viewer', 'Viewer'],
];

export function Team() {
  const isAdmin = useCan('admin');
  const { me } = useMe();
  const users = useLoad(() => ok(api.GET('/users', { params: { query: { limit: 100 } } })), []);
  const change = useSubmit();
  document.title = 'Team · Burnrate';
  return (
    <Screen title="Team">
      <h2>Users</h2>
      <ErrorBox error={change.error} />
      <Show state={users}>
        {({ items }) => (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Users">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  {isAdmin && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {items.map((u) => {
                  const name = `${u.firstName} ${u.lastName}`;
                  return (
                    <tr key={u.userId}>
                      <td>
                        {name}
                        {u.userId === me.user.userId ? ' (you)' : ''}
                      </td>
                      <td>{u.email}</td>
                      <td>
                        {isAdmin ? (
                          <Select
                            label={`Role of ${name}`}
                            value={u.role}
                            options={ROLES}
                            onChange={(e) =>
                              void change
                                .run(() => ok(api.PATCH('/users/{userId}', { params: { path: { userId: u.userId } }, body: { role: e.currentTarget.value as Role } })))
                                .then(users.reload)
                            }
                          />
                        ) : (
                          u.role
                        )}
                      </td>
                      {isAdmin && (
                        <td>
                          <button
                            type="button"
                            class="secondary"
                            onClick={() => {
                              if (confirm(`Remove ${name} from the team?`)) {
                                void change.run(() => ok(api.DELETE('/users/{userId}', { params: { path: { userId: u.userId } } }))).then(users.reload);
                              }
                            }}
                          >
                            Remove {name}
                          </button>
                        </td>
                      )}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Show>
      {isAdmin && <Invitations />}
    </Screen>
  );
}

function Invitations() {
  const list = useLoad(() => ok(api.GET('/invitations')), []);
  const [form, setForm] = useState<{ email: string; role: Role }>({ email: '', role: 'member' });
  const invite = useSubmit();
  const revoke = useSubmit();
  return (
    <>
      <h2>Invitations</h2>
      <Form
        label="Invite a teammate"
        error={invite.error}
        onSubmit={() =>
          void invite.run(() => ok(api.POST('/invitations', { body: form }))).then((done) => {
            if (done) {
              setForm({ ...form, email: '' });
              list.reload();
            }
          })
        }
      >
        <Field label="E-mail" type="email" required value={form.email} error={invite.fieldError('email', 'E-mail')} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
        <Select label="Role" value={form.role} options={ROLES} onChange={(e) => setForm({ ...form, role: e.currentTarget.value as Role })} />
        <button type="submit" disabled={invite.busy}>
          Send invitation
        </button>
      </Form>
      <ErrorBox error={revoke.error} />
      <Show state={list}>
        {({ items }) =>
          items.length === 0 ? (
            <Empty>No pending invitations.</Empty>
          ) : (
            <ul>
              {items.map((i) => (
                <li key={i.id}>
                  {i.email} as {i.role}, until {when(i.expiresAt)}{' '}
                  <button
                    type="button"
                    class="link"
                    onClick={() => void revoke.run(() => ok(api.DELETE('/invitations/{id}', { params: { path: { id: i.id } } }))).then(list.reload)}
                  >
                    Revoke the invitation of {i.email}
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </>
  );
}
