import * as fs from 'node:fs';
import type { z } from 'zod';

/**
 * A small JSON file of the host's own (agent records, agent numbers), read against its schema. A missing
 * file is no data; one that is not JSON or not of the schema is moved aside to `<path>.corrupt-<time>`
 * and reported through `warn` with what it costs, so a damaged file never stops a Thread from opening and
 * is never overwritten before a person can look at it. A file that exists but cannot be read (permissions)
 * throws: setting it aside would lose data that is not damaged.
 */
export function readCheckedJson<T>(
  path: string,
  schema: z.ZodType<T>,
  o: { what: string; consequence: string; warn: (message: string) => void; now: () => number },
): T | null {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`the ${o.what} in ${path} cannot be read: ${(err as Error).message}`);
  }
  const parsed = check(text, schema);
  if (parsed.ok) return parsed.value;
  const aside = `${path}.corrupt-${o.now()}`;
  fs.renameSync(path, aside);
  o.warn(`forkbench: the ${o.what} in ${path} are damaged (${parsed.reason}); kept as ${aside}. ${o.consequence}`);
  return null;
}

function check<T>(text: string, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON: ${(err as Error).message}` };
  }
  const checked = schema.safeParse(json);
  if (checked.success) return { ok: true, value: checked.data };
  const issue = checked.error.issues[0];
  return { ok: false, reason: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'not of its kind'}` };
}
