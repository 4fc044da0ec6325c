import { describe, expect, expectTypeOf, it } from 'vitest';
import { AGENT_METHOD_NAMES, AGENT_METHODS, type AgentMethod } from '../../../src-shared/protocol/agentMethods.js';
import { agentProcedures, type AgentInput, type AgentOutput } from '../../../src-shared/protocol/agentSchemas.js';
import type { ReportableState } from '../../../src-shared/agents/agentLife.js';
import type { ClaimView, TaskView } from '../../../src-shared/protocol/views.js';

/**
 * The agents' procedures are derived from the one plain table the CLI reads (agentMethods.ts): each
 * method's input schema from its params, and its input type from the params' literal types. These hold the
 * schema and the type to the table. (The type checks run under `npm run typecheck`.)
 */
describe("the agents' procedures, derived per method from the one table", () => {
  it('has one procedure per method of the table, and no other', () => {
    expect(Object.keys(agentProcedures).sort()).toEqual([...AGENT_METHOD_NAMES].sort());
  });

  it.each(AGENT_METHODS.map((m) => [m.name, m] as const))("%s: its schema takes exactly the table's params, the required ones required", (name, spec) => {
    const input = agentProcedures[name as AgentMethod].input;
    expect(Object.keys(input.shape).sort()).toEqual(spec.params.map((p) => p.name).sort());
    const empty = input.safeParse({});
    const required = spec.params.filter((p) => p.required).map((p) => p.name);
    if (required.length === 0) expect(empty.success).toBe(true);
    else {
      expect(empty.success).toBe(false);
      const missing = empty.success ? [] : empty.error.issues.map((i) => String(i.path[0]));
      expect(missing.sort()).toEqual(required.sort());
    }
    // Strict: a name the table does not give is refused, not passed on to the handler.
    const extra = input.safeParse({ unheardOf: 1 });
    expect(extra.success).toBe(false);
    expect(JSON.stringify(extra.error?.issues)).toContain('unheardOf');
  });

  it("types each handler's input by its method: required params present, optional ones optional, kinds typed", () => {
    expectTypeOf<AgentInput<'note'>>().toEqualTypeOf<{ taskId: string; text: string; token?: number | undefined; key?: string | undefined }>();
    expectTypeOf<AgentInput<'record'>>().toEqualTypeOf<{ taskId: string; token?: number | undefined; ref: string; from: string; to: string; key?: string | undefined }>();
    expectTypeOf<AgentInput<'fence'>>().toEqualTypeOf<{ taskId: string; token?: number | undefined; ref?: string | undefined; from?: string | undefined; to?: string | undefined; key?: string | undefined }>();
    expectTypeOf<AgentInput<'claim'>>().toEqualTypeOf<{ taskId?: string | undefined; force?: boolean | undefined; key?: string | undefined }>();
    expectTypeOf<AgentInput<'edit'>>().toEqualTypeOf<{ taskId: string; title?: string | undefined; body?: string | undefined; after?: string[] | undefined; token?: number | undefined; key?: string | undefined }>();
    expectTypeOf<AgentInput<'status'>>().toEqualTypeOf<{ state: ReportableState; text?: string | undefined }>();
    // No params: a strict object with nothing in it.
    expectTypeOf<AgentInput<'board'>>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<AgentOutput<'note'>>().toEqualTypeOf<ClaimView>();
    expectTypeOf<AgentOutput<'add'>>().toEqualTypeOf<TaskView>();
  });
});
