import { z } from 'zod';
import { BodySchema, NoteTextSchema, TaskIdSchema, TokenSchema } from '../board/schemas.js';
import { AGENT_METHODS, type AgentMethod, type ParamKind } from './agentMethods.js';

/** Runtime schemas for the agents' API, built from the one method table. */
const kindSchema: Record<ParamKind, z.ZodType> = {
  taskId: TaskIdSchema,
  token: TokenSchema,
  note: NoteTextSchema,
  title: z.string().min(1).max(1024 * 1024), // the engine trims and applies the real title rules
  body: BodySchema,
  // What git prints: a full ref name and a full object id (SHA-1, or SHA-256 in a repository that uses it).
  ref: z.string().regex(/^refs\/[^\s\0]{1,250}$/, 'a full ref name, like refs/heads/forkbench/T-3'),
  sha: z.string().regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/, 'a full commit id (40 or 64 hex digits)'),
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

export const agentParamSchemas: Record<AgentMethod, z.ZodType<Record<string, unknown>>> = Object.fromEntries(
  AGENT_METHODS.map((m) => [m.name, z.object(paramShape(m.name)).strict()]),
) as unknown as Record<AgentMethod, z.ZodType<Record<string, unknown>>>;
