/** "1 commit", "3 commits": a count with its noun, for messages a person reads (English only). */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
