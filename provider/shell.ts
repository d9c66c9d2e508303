/** Quotes one word for POSIX sh: the result is always a single literal word. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}
