/** Request schemas of the /auth endpoints (zod/mini: the same schemas validate requests and feed OpenAPI). */
import * as z from 'zod/mini';

/** A person's or company's name: trimmed, 1–100 characters. */
export const name = (label: string) => {
  const message = `${label} must be a string of 1–100 characters.`;
  return z.string(message).check(z.trim(), z.minLength(1, message), z.maxLength(100, message));
};

/** Trimmed, lower-cased, a plausible address. */
export const Email = z.pipe(
  z.string().check(z.trim(), z.toLowerCase(), z.maxLength(254, 'email must be at most 254 characters.')),
  z.email('email must be a valid e-mail address.'),
);

/** An upper-case letter, a lower-case letter and a digit, anywhere: one pattern of lookaheads. */
const PASSWORD_COMPOSITION = /^(?=[\s\S]*[A-Z])(?=[\s\S]*[a-z])(?=[\s\S]*[0-9])/;

/** docs/features/identity-and-teams.md: at least 8 characters with an upper-case letter, a lower-case letter and a digit. */
export const Password = z.string().check(
  z.minLength(8, 'password must be at least 8 characters.'),
  z.maxLength(256, 'password must be at most 256 characters.'),
  // ONE pattern (lookaheads), so the document carries one: separate patterns become an `allOf` that client tools
  // merge into an impossible pattern (Prism) or `unknown & unknown & unknown` (hey-api).
  z.regex(PASSWORD_COMPOSITION, 'password must contain an upper-case letter, a lower-case letter and a digit.'),
);

export const RegisterBody = z.strictObject({
  email: Email,
  password: Password,
  firstName: name('firstName'),
  lastName: name('lastName'),
  companyName: name('companyName'),
});
export type RegisterBody = z.infer<typeof RegisterBody>;

/** An e-mail address only (docs/features/identity-and-teams.md): a Cognito `sub` or another username would count failures under another subject. */
export const LoginBody = z.strictObject({
  email: Email,
  password: z.string().check(z.minLength(1, 'password is required.'), z.maxLength(256)),
});
export type LoginBody = z.infer<typeof LoginBody>;

export const RefreshBody = z.strictObject({
  refreshToken: z.string().check(z.minLength(1, 'refreshToken is required.'), z.maxLength(8192)),
});
export type RefreshBody = z.infer<typeof RefreshBody>;

/** A link token as it arrives from the dashboard (its exact shape is checked by the domain: an invalid-token 400). */
const LinkToken = z.string().check(z.minLength(1, 'token is required.'), z.maxLength(512, 'token is too long.'));

export const VerifyEmailBody = z.strictObject({ token: LinkToken });
export type VerifyEmailBody = z.infer<typeof VerifyEmailBody>;

export const ForgotPasswordBody = z.strictObject({ email: Email });
export type ForgotPasswordBody = z.infer<typeof ForgotPasswordBody>;

export const ResetPasswordBody = z.strictObject({ token: LinkToken, password: Password });
export type ResetPasswordBody = z.infer<typeof ResetPasswordBody>;

/** The new password follows register's rules; the current one is only compared (any non-empty string). */
export const ChangePasswordBody = z.strictObject({
  currentPassword: z.string().check(z.minLength(1, 'currentPassword is required.'), z.maxLength(256, 'currentPassword is too long.')),
  newPassword: z.string().check(
    z.minLength(8, 'newPassword must be at least 8 characters.'),
    z.maxLength(256, 'newPassword must be at most 256 characters.'),
    // ONE pattern, as Password's (an allOf of patterns is impossible in client tools).
    z.regex(PASSWORD_COMPOSITION, 'newPassword must contain an upper-case letter, a lower-case letter and a digit.'),
  ),
});
export type ChangePasswordBody = z.infer<typeof ChangePasswordBody>;

/** PATCH /auth/me: at least one field. */
export const PatchMeBody = z
  .strictObject({
    firstName: z.optional(name('firstName')),
    lastName: z.optional(name('lastName')),
    alertEmails: z.optional(z.boolean('alertEmails must be true or false.')),
  })
  .check(
    // Silent when the body has problems already (an unknown field).
    z.refine((patch: unknown) => typeof patch === 'object' && patch !== null && Object.keys(patch).length > 0, {
      error: 'Send at least one of firstName, lastName, alertEmails.',
      when: (payload) => payload.issues.length === 0,
    }),
  );
export type PatchMeBody = z.infer<typeof PatchMeBody>;
