/**
 * A fake OpenAI Responses API (POST /v1/responses, streamed as server-sent events) for the real Codex CLI:
 * each request is answered with one scripted output item, a function call or a final message, and the
 * agent's own conversation is told apart from side requests the CLI may make on its own.
 *
 * The script sees the conversation as the CLI sends it back (Codex keeps no state on the server: every
 * request carries the whole history): every function call the model made with the output the CLI
 * returned for it, and the tools the CLI offers. So each step follows from what really happened (the
 * claim's token is read from the claim's output), as a model's would.
 *
 * Tools arrive flat (`{ type: 'function', name: 'exec_command' }`) or grouped in namespaces
 * (`{ type: 'namespace', name: 'mcp__forkbench', tools: [...] }`, how Codex 0.171 offers an MCP server's
 * tools). A call to a namespaced tool names the tool and its namespace separately; in the script a tool is
 * called by its qualified name, `mcp__forkbench.claim`.
 */
import type { ServerResponse } from 'node:http';
import { sse, sseStart, startScriptedModelServer, type ScriptedModelServer } from './harness.js';

/** One entry of the request's `tools`, as far as the fake reads it. */
export interface ApiTool {
  type: string;
  name?: string;
  tools?: ApiTool[];
  [key: string]: unknown;
}

/** One item of the request's `input` (messages, function calls, their outputs…). */
export interface InputItem {
  type?: string;
  role?: string;
  content?: string | Array<{ type?: string; text?: string }>;
  name?: string;
  namespace?: string;
  call_id?: string;
  arguments?: string;
  output?: string | Array<{ type?: string; text?: string }>;
  [key: string]: unknown;
}

/** The body of POST /v1/responses. */
export interface ResponsesBody {
  model: string;
  input: InputItem[];
  instructions?: string;
  tools?: ApiTool[];
  stream?: boolean;
}

/** A function call the model made, with what the CLI answered. */
export interface ToolCall {
  callId: string;
  /** Qualified: `exec_command`, or `mcp__forkbench.claim` for a tool in a namespace. */
  name: string;
  input: Record<string, unknown>;
  /** The output's text (text parts joined); '' while the call has no output yet. */
  output: string;
  answered: boolean;
}

export interface Conversation {
  body: ResponsesBody;
  /** Tools the request offers, by qualified name. */
  tools: string[];
  /** Every function call in the conversation, in order, with its output. */
  calls: ToolCall[];
  /** All text of the conversation (instructions, messages, call outputs), to find what the CLI said. */
  text: string;
  /** What the fake answered it with: the response's id, the usage it reported and when (wall ms). */
  reply?: { id: string; usage: ResponsesUsage; at: number };
}

/** The usage a response reports, as the Responses API names it. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * The usage of the fake's response number `n`: different for every response and in every kind, so the counts
 * a CLI recorded say exactly which responses went into them (issue 47's readers are checked by them).
 */
export function usageOfResponse(n: number): ResponsesUsage {
  const input = 1000 + 13 * n;
  const output = 20 + 3 * n;
  return { input_tokens: input, input_tokens_details: { cached_tokens: 100 + n }, output_tokens: output, output_tokens_details: { reasoning_tokens: n }, total_tokens: input + output };
}

export type Turn = { text: string } | { tool: string; input: Record<string, unknown> };

export interface Script {
  /** Whether a request is the agent's conversation; anything else is a side request and gets a short text. */
  isAgent(conversation: Conversation): boolean;
  next(conversation: Conversation): Turn;
}

/** The fake's requests, the agent's turns the script played, and a summary of them for failure messages. */
export type FakeResponses = ScriptedModelServer<Conversation, Turn>;

export function startFakeResponses(script: Script): Promise<FakeResponses> {
  let ids = 0;
  return startScriptedModelServer<Conversation, Turn, ResponsesBody>(
    (req, res, played) => {
      const path = req.path.split('?')[0] ?? '';
      if (req.method !== 'POST' || path !== '/v1/responses') return false;
      if (req.headers['content-encoding']) throw new Error(`the fake reads plain JSON; the request came ${req.headers['content-encoding']}-encoded`);
      const conversation = conversationOf(req.body as ResponsesBody);
      let turn: Turn = { text: 'OK' };
      if (script.isAgent(conversation)) {
        turn = script.next(conversation);
        played(conversation, turn);
      }
      const n = ++ids;
      const usage = usageOfResponse(n);
      conversation.reply = { id: `resp_fake_${n}`, usage, at: Date.now() };
      reply(res, turn, n, usage);
      return true;
    },
    (body) => (Array.isArray(body.input) ? `model=${body.model} input=${body.input.length} tools=${toolNames(body.tools ?? []).length}` : null),
  );
}

function conversationOf(body: ResponsesBody): Conversation {
  const calls: ToolCall[] = [];
  const byId = new Map<string, ToolCall>();
  const text: string[] = [body.instructions ?? ''];
  for (const item of body.input ?? []) {
    if (item.type === 'message' || (item.type === undefined && item.role)) text.push(textOf(item.content));
    if (item.type === 'function_call' && item.call_id && item.name) {
      let input: Record<string, unknown> = {};
      try {
        input = JSON.parse(item.arguments ?? '{}') as Record<string, unknown>;
      } catch {
        /* left empty: the script sees a call without arguments */
      }
      const call: ToolCall = { callId: item.call_id, name: item.namespace ? `${item.namespace}.${item.name}` : item.name, input, output: '', answered: false };
      calls.push(call);
      byId.set(item.call_id, call);
    }
    if (item.type === 'function_call_output' && item.call_id) {
      const call = byId.get(item.call_id);
      const output = textOf(item.output);
      text.push(output);
      if (call) {
        call.output = output;
        call.answered = true;
      }
    }
  }
  return { body, tools: toolNames(body.tools ?? []), calls, text: text.join('\n') };
}

function toolNames(tools: ApiTool[], namespace?: string): string[] {
  return tools.flatMap((t) => {
    if (t.type === 'namespace' && t.name) return toolNames(t.tools ?? [], t.name);
    if (!t.name) return [t.type];
    return [namespace ? `${namespace}.${t.name}` : t.name];
  });
}

function textOf(content: InputItem['content'] | InputItem['output']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => p.text ?? '').join('\n');
}

/** Streams one response holding `turn` as its single output item, as the Responses API streams it. */
function reply(res: ServerResponse, turn: Turn, n: number, usage: ResponsesUsage): void {
  let item: Record<string, unknown>;
  if ('tool' in turn) {
    const dot = turn.tool.lastIndexOf('.');
    const [namespace, name] = dot < 0 ? [undefined, turn.tool] : [turn.tool.slice(0, dot), turn.tool.slice(dot + 1)];
    item = { type: 'function_call', id: `fc_fake_${n}`, call_id: `call_fake_${n}`, name, ...(namespace ? { namespace } : {}), arguments: JSON.stringify(turn.input) };
  } else {
    item = { type: 'message', id: `msg_fake_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
  }
  const id = `resp_fake_${n}`;
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) => sse(res, { type, sequence_number: seq++, ...data }, type);
  sseStart(res);
  event('response.created', { response: { id, object: 'response', status: 'in_progress', output: [] } });
  event('response.output_item.added', { output_index: 0, item: 'tool' in turn ? { ...item, arguments: '' } : { ...item, content: [] } });
  if ('tool' in turn) {
    event('response.function_call_arguments.done', { output_index: 0, item_id: item.id, arguments: item.arguments });
  } else {
    event('response.output_text.delta', { output_index: 0, content_index: 0, item_id: item.id, delta: turn.text });
  }
  event('response.output_item.done', { output_index: 0, item });
  event('response.completed', { response: { id, object: 'response', status: 'completed', output: [item], usage } });
  res.end();
}
