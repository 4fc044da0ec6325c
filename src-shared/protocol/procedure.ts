import type { z } from 'zod';

/**
 * One procedure of an API the host or the pty host serves (the window's, the agents', the pty host's), in one
 * shape: `input`, the schema its params are validated against at the serving edge, and `output`, what it
 * answers. The server pairs each entry with a handler of the same name (src-main/base/procedureServer.ts), so
 * a procedure without a handler, or a handler that takes or answers the wrong shape, does not compile;
 * handlers get the validated value and never re-check it.
 *
 * `output` is a schema where the caller checks the answer (the pty host link: the other end is another
 * process, possibly of a broken build), and a type only where it trusts the answer (the window and the agents
 * hear from the host itself): no one would run those schemas, and the CLI must not load a schema library.
 */
export interface Procedure<I extends z.ZodType = z.ZodType, A extends Answer = Answer> {
  readonly input: I;
  readonly output: A;
}

/** What a procedure answers: a schema the caller checks it against, or its type only (`typeOnly`). */
export type Answer<O = unknown> = z.ZodType<O> | TypeOnly<O>;

/** An answer known by its type alone. `type` is never set: it carries the answer's type. */
export interface TypeOnly<O> {
  readonly checked: false;
  readonly type?: O;
}

const TYPE_ONLY: TypeOnly<never> = { checked: false };
export const typeOnly = <O>(): TypeOnly<O> => TYPE_ONLY;

export const procedure = <I extends z.ZodType, A extends Answer>(input: I, output: A): Procedure<I, A> => ({ input, output });

export type ProcedureTable = { readonly [name: string]: Procedure };
export type InputOf<T extends ProcedureTable, M extends keyof T> = z.output<T[M]['input']>;
/** What the caller sends: before the schema's defaults and transforms. */
export type ParamsOf<T extends ProcedureTable, M extends keyof T> = z.input<T[M]['input']>;
export type AnswerOf<A> = A extends z.ZodType ? z.output<A> : A extends TypeOnly<infer O> ? O : never;
export type OutputOf<T extends ProcedureTable, M extends keyof T> = AnswerOf<T[M]['output']>;

/**
 * The longest method name a request may carry, and an error message quotes: every real one is far shorter
 * (the longest, `board.setSettings`, has 17 characters), and the bound keeps a caller's megabyte-long "name"
 * out of error messages and logs. The window's request frame, the procedure edge and the pty host all use it.
 */
export const MAX_METHOD_NAME_CHARS = 64;

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
