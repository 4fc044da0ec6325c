/**
 * `s` as one word of a POSIX shell command, whatever it holds: inside single quotes nothing is special but
 * the quote itself, which is written as end quote, escaped quote, quote again (`'\''`).
 */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
