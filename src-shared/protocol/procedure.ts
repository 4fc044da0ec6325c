import type { z } from 'zod';

/**
 * One procedure of an API the host serves (the window's and the agents'): the schema its input is validated
 * against at the edge, and, as a type only, what it answers. The host pairs each entry with a handler of the
 * same name (src-main/base/procedureServer.ts), so a procedure without a handler, or a handler that takes or
 * answers the wrong shape, does not compile; handlers get the validated value and never re-check it.
 */
/** The longest method name a request may carry, and an error message quotes: every real one is far shorter,
 *  and a longer one is refused before it is looked up (the WebSocket frame) or cut where it is quoted. */
export const MAX_METHOD_CHARS = 64;

export interface Procedure<I extends z.ZodType, O> {
  readonly input: I;
  /** Never set: carries the answer's type. */
  readonly output?: O;
}

export const procedure =
  <O>() =>
  <I extends z.ZodType>(input: I): Procedure<I, O> => ({ input });

export type ProcedureTable = { readonly [name: string]: Procedure<z.ZodType, unknown> };
export type InputOf<T extends ProcedureTable, M extends keyof T> = z.output<T[M]['input']>;
export type OutputOf<T extends ProcedureTable, M extends keyof T> = T[M] extends Procedure<z.ZodType, infer O> ? O : never;

/**
 * Why a call was refused, whatever carried it: `code` is a board rejection code, a worktree problem, or one
 * of the edge's own (`unknown-method`, `invalid-input`, `failed`), and `message` says what to do.
 */
export interface CallError {
  readonly code: string;
  readonly message: string;
}

/** Where a call stopped: at its name, at its input, or in its handler (which refused or failed). */
export type CallStage = 'method' | 'input' | 'handler';
export interface CallFailure extends CallError {
  readonly at: CallStage;
}
