import { z } from 'zod';
import { AfterTextSchema, DispatchModeSchema, LabelsTextSchema, TakersTextSchema, BodySchema, NoteTextSchema, TaskIdSchema, TitleSchema, TokenSchema } from '../board/schemas.js';
import { MAX_PROMPT_CHARS, REPORTABLE_STATES, type AgentStateInfo } from '../agents/agentLife.js';
import { methodSpec, TURN_ID_PATTERN, TURN_ID_RULE, WRITE_KEY_PATTERN, WRITE_KEY_RULE, type AgentMethod, type AgentParamSpecs, type ClaimResult, type DoneView, type ParamKind, type RecordView, type WhyView, type ProfileLeaseView, type DispatchView, type QueueView, type UsageReportView, type LimitsReportView, type CostAnswer } from './agentMethods.js';
import { LIMITS_TEXT_MAX, LIMITS_TEXT_RULE, parseLimitsText } from '../usage/limitsText.js';
import { procedure, typeOnly, type InputOf, type OutputOf, type ParamsOf, type Procedure } from './procedure.js';
import type { BoardView, ClaimView, TaskView } from './views.js';
import { ReportBounds } from '../usage/reportBounds.js';

/** A write's idempotency key, as the agents' writes and the window's (windowApi.ts) carry it. */
export const WriteKeySchema = z.string().regex(WRITE_KEY_PATTERN, `an idempotency key is ${WRITE_KEY_RULE}`);

/** Each kind of parameter's schema: the same rules the window's use. */
const kindSchema = {
  taskId: TaskIdSchema,
  token: TokenSchema,
  note: NoteTextSchema,
  title: TitleSchema,
  body: BodySchema,
  // What git prints: a full ref name and a full object id (SHA-1, or SHA-256 in a repository that uses it).
  ref: z.string().regex(/^refs\/[^\s\0]{1,250}$/, 'a full ref name, like refs/heads/forkbench/T-3'),
  sha: z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, 'a full commit id (40 or 64 hex digits)'),
  agentState: z.enum(REPORTABLE_STATES, { error: `a state is one of ${REPORTABLE_STATES.join(', ')}` }),
  // Controls are no reason to refuse a dialog's text (MAX_PROMPT_CHARS says why they may stay).
  prompt: z.string().max(MAX_PROMPT_CHARS, `the prompt text is longer than ${MAX_PROMPT_CHARS} characters`),
  key: WriteKeySchema,
  after: AfterTextSchema,
  flag: z.boolean(),
  takers: TakersTextSchema,
  labels: LabelsTextSchema,
  dispatchMode: DispatchModeSchema,
  // Issue 47's `usage`: one turn an agent reports of itself, held to what a real turn can be (reportBounds.ts).
  count: z.number({ error: 'a token count is a whole number, 0 or more' }).int('a token count is a whole number, 0 or more').nonnegative('a token count is a whole number, 0 or more').max(ReportBounds.maxTokensPerKind, `a token count is at most ${ReportBounds.maxTokensPerKind.toLocaleString('en')} for one turn`),
  usd: z.number({ error: 'a cost is a number of US dollars, 0 or more' }).finite('a cost is a number of US dollars, 0 or more').nonnegative('a cost is a number of US dollars, 0 or more').max(ReportBounds.maxUsd, `a cost is at most ${ReportBounds.maxUsd.toLocaleString('en')} US dollars for one turn`),
  model: z.string().min(1, 'a model name is not empty').max(200, 'a model name is at most 200 characters').regex(/^[^\p{C}]*$/u, 'a model name holds no control characters'),
  turnId: z.string().regex(TURN_ID_PATTERN, `a turn id is ${TURN_ID_RULE}`),
  limits: z
    .string()
    .max(LIMITS_TEXT_MAX, `rate-limit readings are at most ${LIMITS_TEXT_MAX} characters: ${LIMITS_TEXT_RULE}`)
    .superRefine((v, ctx) => {
      const r = parseLimitsText(v);
      if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
    }),
} as const satisfies Record<ParamKind, z.ZodType>;
type KindSchema = typeof kindSchema;

/** Method `M`'s zod shape, read off its params' literal types: a required param is its kind's schema, an
 *  optional one that schema made optional. */
type ShapeOf<M extends AgentMethod> = {
  [P in AgentParamSpecs<M> as P['name']]: P['required'] extends true ? KindSchema[P['kind']] : z.ZodOptional<KindSchema[P['kind']]>;
};

/**
 * Method `M`'s input schema, built from its params in the one table (agentMethods.ts). The loop cannot tell
 * the compiler which key gets which schema, so the shape it builds is stated to be `ShapeOf<M>`, which is
 * what the loop does by construction (test/shared/protocol/agentProcedures.test.ts holds both to it).
 */
function inputOf<M extends AgentMethod>(method: M) {
  const shape: Record<string, z.ZodType> = {};
  for (const p of methodSpec(method)?.params ?? []) {
    const base = kindSchema[p.kind].describe(p.describe);
    shape[p.name] = p.required ? base : base.optional();
  }
  return z.strictObject(shape as ShapeOf<M>);
}

/**
 * The agents' API as procedures, in the shape the window's and the pty host's have: each method's input
 * schema (from the table's params) and its answer's type. The host's handlers are typed by it
 * (src-main/agents/agentRpc.ts: each gets its method's validated input, no casts), and the CLI and MCP
 * server by its types (`AgentInput`, `AgentOutput`), imported as types only so the CLI loads no zod.
 */
export const agentProcedures = {
  board: procedure(inputOf('board'), typeOnly<BoardView>()),
  show: procedure(inputOf('show'), typeOnly<TaskView>()),
  why: procedure(inputOf('why'), typeOnly<WhyView>()),
  queue: procedure(inputOf('queue'), typeOnly<QueueView>()),
  'queue-move': procedure(inputOf('queue-move'), typeOnly<QueueView>()),
  claim: procedure(inputOf('claim'), typeOnly<ClaimResult>()),
  renew: procedure(inputOf('renew'), typeOnly<ClaimView>()),
  note: procedure(inputOf('note'), typeOnly<ClaimView>()),
  done: procedure(inputOf('done'), typeOnly<DoneView>()),
  release: procedure(inputOf('release'), typeOnly<{ taskId: string }>()),
  add: procedure(inputOf('add'), typeOnly<TaskView>()),
  edit: procedure(inputOf('edit'), typeOnly<ClaimView>()),
  fence: procedure(inputOf('fence'), typeOnly<ClaimView>()),
  record: procedure(inputOf('record'), typeOnly<RecordView>()),
  status: procedure(inputOf('status'), typeOnly<AgentStateInfo>()),
  leases: procedure(inputOf('leases'), typeOnly<ProfileLeaseView[]>()),
  dispatch: procedure(inputOf('dispatch'), typeOnly<DispatchView>()),
  cost: procedure(inputOf('cost'), typeOnly<CostAnswer>()),
  usage: procedure(inputOf('usage'), typeOnly<UsageReportView>()),
  limits: procedure(inputOf('limits'), typeOnly<LimitsReportView>()),
} as const satisfies { readonly [M in AgentMethod]: Procedure };

type AgentProcedures = typeof agentProcedures;
/** A method's input as its handler gets it (validated). */
export type AgentInput<M extends AgentMethod> = InputOf<AgentProcedures, M>;
/** A method's params as a caller sends them. */
export type AgentParams<M extends AgentMethod> = ParamsOf<AgentProcedures, M>;
/** What a method answers. */
export type AgentOutput<M extends AgentMethod> = OutputOf<AgentProcedures, M>;

/** The zod shape of one method's params (what MCP's registerTool takes as inputSchema). */
export function paramShape(method: AgentMethod): Record<string, z.ZodType> {
  return agentProcedures[method].input.shape;
}
