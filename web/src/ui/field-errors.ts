/**
 * The API's field errors in the user's words (issue 18: "monthlyLimit must be a number"; sign-up said "2 invalid
 * fields" while showing one). Pure, so unit tests import it without a browser.
 */
export interface FieldError {
  path: string;
  message: string;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `monthlyLimit must be a number` with the label "Monthly limit" → `Monthly limit must be a number`. */
export function inUserWords(message: string, path: string, label: string | undefined): string {
  if (!label) return message;
  const last = path.split('.').at(-1) ?? path;
  const names = [...new Set([path, last])].map(escape).join('|');
  return message.replace(new RegExp(`(^|[^\\w.])(${names})(?![\\w.])`), (_all, before: string) => `${before}${label}`);
}

/**
 * The form's own message for a problem with field errors: the fields shown beside their inputs counted once each
 * (however many errors one field has), named by their labels; errors of fields the form does not show, in full.
 */
export function summarize(errors: readonly FieldError[], labels: ReadonlyMap<string, string>, fallback: string): string {
  const shown = [...new Set(errors.filter((e) => labels.has(e.path)).map((e) => labels.get(e.path)!))];
  const other = errors.filter((e) => !labels.has(e.path)).map((e) => e.message);
  const parts: string[] = [];
  if (shown.length === 1) parts.push(`Check the field “${shown[0]}”.`);
  else if (shown.length > 1) parts.push(`Check these ${shown.length} fields: ${shown.map((l) => `“${l}”`).join(', ')}.`);
  parts.push(...other);
  return parts.length ? parts.join(' ') : fallback;
}
