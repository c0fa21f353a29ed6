/** @burnrate/reporter — being built under issue 21; nothing is exported yet. */
export {};
