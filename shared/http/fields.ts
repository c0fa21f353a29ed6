/** Field schemas (zod/mini) that requests of several areas share. */
import * as z from 'zod/mini';

/** A display name: trimmed, 1–100 characters. */
export const name = (field = 'name') => {
  const message = `${field} must be a string of 1–100 characters.`;
  return z.string(message).check(z.trim(), z.minLength(1, message), z.maxLength(100, message));
};
