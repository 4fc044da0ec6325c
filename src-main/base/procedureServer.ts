import { firstIssue } from '../../src-shared/board/schemas.js';
import { failed, type Result } from '../../src-shared/board/result.js';
import { MAX_METHOD_CHARS, type CallError, type CallFailure, type InputOf, type OutputOf, type ProcedureTable } from '../../src-shared/protocol/procedure.js';

/** A procedure's handler: the validated input, the caller's context, the procedure's answer. */
export type Handlers<T extends ProcedureTable, Ctx> = {
  readonly [M in keyof T & string]: (input: InputOf<T, M>, ctx: Ctx) => OutputOf<T, M> | Promise<OutputOf<T, M>>;
};

/** A handler's refusal, with the code the caller gets (a board rejection code, `no-such-thread`…). */
export class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

/** The value of a board decision, or its rejection thrown as the handler's refusal. */
export function unwrap<T>(r: Result<T, CallError>): T {
  if (!r.ok) throw new Refusal(r.error.code, r.error.message);
  return r.value;
}

/** A method that is not one, for an error message. Never `String(m)`: a caller's object decides what that
 *  does (`{toString: 1}` throws), and the edge must answer whatever it is given. */
const describeMethod = (m: unknown): string => (typeof m === 'string' ? `'${m.slice(0, MAX_METHOD_CHARS)}'` : `(a ${m === null ? 'null' : typeof m})`);

/**
 * The one error mapping: what a handler threw, as the caller's code and message. A Refusal and any error
 * carrying a kebab-case `code` (a WorktreeError's problem, a git failure) keep their code; anything else is
 * `failed`, with its message, so a bug is reported, never turned into a success or a hang.
 */
export function errorOf(err: unknown): CallError {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && /^[a-z-]+$/.test(code)) return { code, message };
  return { code: 'failed', message };
}

/**
 * Serve one call at the edge: find the procedure, validate its input once against the shared schema, run
 * its handler on the validated value, answer its value or a typed failure saying where it stopped.
 */
export async function callProcedure<T extends ProcedureTable, Ctx>(
  table: T,
  handlers: Handlers<T, Ctx>,
  method: unknown,
  params: unknown,
  ctx: Ctx,
): Promise<Result<unknown, CallFailure>> {
  if (typeof method !== 'string' || !Object.hasOwn(table, method) || !Object.hasOwn(handlers, method))
    return failed({ at: 'method', code: 'unknown-method', message: `unknown method ${describeMethod(method)}` });
  const parsed = (table[method] as T[string]).input.safeParse(params ?? {});
  if (!parsed.success) return failed({ at: 'input', code: 'invalid-input', message: firstIssue(parsed.error) });
  try {
    const handler = handlers[method] as (input: unknown, ctx: Ctx) => unknown;
    return { ok: true, value: (await handler(parsed.data, ctx)) ?? null };
  } catch (err) {
    return failed({ at: 'handler', ...errorOf(err) });
  }
}
