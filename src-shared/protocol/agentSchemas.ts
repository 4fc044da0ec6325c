import { z } from 'zod';
import { BodySchema, NoteTextSchema, TaskIdSchema, TitleSchema, TokenSchema } from '../board/schemas.js';
import { MAX_PROMPT_CHARS, REPORTABLE_STATES } from '../agents/agentState.js';
import { AGENT_METHODS, type AgentMethod, type AgentResults, type ParamKind } from './agentMethods.js';
import type { Procedure } from './procedure.js';

/** Runtime schemas for the agents' API, built from the one method table: the same rules the window's use. */
const kindSchema: Record<ParamKind, z.ZodType> = {
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
};

/** The zod shape of one method's params (what MCP's registerTool takes as inputSchema). */
export function paramShape(method: AgentMethod): Record<string, z.ZodType> {
  const spec = AGENT_METHODS.find((m) => m.name === method);
  if (!spec) throw new Error(`unknown method ${method}`);
  const shape: Record<string, z.ZodType> = {};
  for (const p of spec.params) {
    const base = kindSchema[p.kind].describe(p.describe);
    shape[p.name] = p.required ? base : base.optional();
  }
  return shape;
}

/**
 * An agent method's params as its schema validated them. Each method takes a subset, and the table says
 * which are required; the handlers read them by name. (The table is plain data so the CLI starts without
 * loading zod, which is why these are not inferred per method.)
 */
export interface AgentParams {
  taskId?: string;
  token?: number;
  text?: string;
  note?: string;
  title?: string;
  body?: string;
  ref?: string;
  from?: string;
  to?: string;
  state?: string;
}

/** The agents' API as procedures: the same shape as the window's (src-shared/protocol/procedure.ts). */
export const agentProcedures = Object.fromEntries(AGENT_METHODS.map((m) => [m.name, { input: z.object(paramShape(m.name)).strict() }])) as unknown as {
  readonly [M in AgentMethod]: Procedure<z.ZodType<AgentParams>, AgentResults[M]>;
};
