/** Form errors in the user's words (issue 18: "monthlyLimit must be a number"; "2 invalid fields" while one was shown). */
import { describe, expect, it } from 'vitest';
import { inUserWords, summarize } from '../../web/src/ui/field-errors.ts';

describe('inUserWords', () => {
  it('names the field by its label, not its JSON name', () => {
    expect(inUserWords('monthlyLimit must be a number.', 'monthlyLimit', 'Monthly limit (US dollars)')).toBe('Monthly limit (US dollars) must be a number.');
    expect(inUserWords('config.threshold must be ≥ 0.', 'config.threshold', 'Amount')).toBe('Amount must be ≥ 0.');
    expect(inUserWords('threshold must be ≥ 0.', 'config.threshold', 'Amount')).toBe('Amount must be ≥ 0.');
  });
  it('leaves a message without the name, or a field without a label, as it is', () => {
    expect(inUserWords('Must be at least 8 characters.', 'password', 'Password')).toBe('Must be at least 8 characters.');
    expect(inUserWords('name is too long.', 'name', undefined)).toBe('name is too long.');
    expect(inUserWords('rename must be short.', 'name', 'Name')).toBe('rename must be short.');
  });
});

describe('summarize', () => {
  const labels = new Map([
    ['password', 'Password'],
    ['email', 'E-mail'],
  ]);
  it('counts a field with two errors once', () => {
    const errors = [
      { path: 'password', message: 'password must have 8 characters.' },
      { path: 'password', message: 'password must have a digit.' },
    ];
    expect(summarize(errors, labels, 'The request body has 2 invalid fields.')).toBe('Check the field “Password”.');
  });
  it('names each field shown and says in full what the form cannot show', () => {
    const errors = [
      { path: 'email', message: 'email is not an e-mail address.' },
      { path: 'password', message: 'password is too short.' },
      { path: 'extra', message: 'extra is not a field of this request; leave it out.' },
    ];
    expect(summarize(errors, labels, '')).toBe('Check these 2 fields: “E-mail”, “Password”. extra is not a field of this request; leave it out.');
  });
});
