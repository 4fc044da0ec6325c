/** T-2 before T-10. */
export const byTaskNumber = (a: string, b: string): number => Number(a.slice(2)) - Number(b.slice(2)) || a.localeCompare(b);

export const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
