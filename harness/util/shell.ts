// Quoting for POSIX shells: what batch scripts and printed command lines need.

/** `value` in single quotes, safe as one word for sh whatever it holds. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Arguments as one shell line: plain words stay bare, anything else is single-quoted. */
export function shellLine(args: readonly string[]): string {
  return args.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : shellQuote(a))).join(' ');
}
