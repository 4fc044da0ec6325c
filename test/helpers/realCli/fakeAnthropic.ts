/**
 * A fake Anthropic Messages API for the real Claude Code CLI: streams scripted turns (text or one tool call)
 * in the API's server-sent-event format, and tells the agent's own conversation apart from the side calls
 * the CLI makes on its own (titles, summaries, token counts).
 *
 * The script sees the conversation as the CLI sends it back: every tool call the model made with the
 * result the CLI returned for it, and the tools the CLI offers (Claude Code lists MCP tools as deferred,
 * `defer_loading`, until the model fetches them with its ToolSearch tool). So each step follows from what really
 * happened (a claim's token is read from the claim's result), like a model's would.
 */
import type { ServerResponse } from 'node:http';
import { json, sse, sseStart, startScriptedModelServer, type ScriptedModelServer } from './harness.js';

/** One content block of a Messages API message, as far as the fake reads it. */
export interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
}

export interface ApiMessage {
  role: string;
  content: string | ContentBlock[];
}

export interface ApiTool {
  name: string;
  defer_loading?: boolean;
  [key: string]: unknown;
}

/** The body of POST /v1/messages. */
export interface MessagesBody {
  model: string;
  messages: ApiMessage[];
  system?: string | ContentBlock[];
  tools?: ApiTool[];
  stream?: boolean;
}

/** A tool call the model made, with what the CLI answered. */
export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** The result's text (text blocks joined); '' while the call has no result yet. */
  result: string;
  isError: boolean;
}

export interface Conversation {
  body: MessagesBody;
  /** What the fake answered it with: the message's id, the usage it reported and when (wall ms, as it replied). */
  reply?: { id: string; usage: Usage; at: number };
  /** Tools the request offers, by name (deferred ones included, flagged in `body.tools`). */
  tools: string[];
  /** Every tool call in the conversation, in order, with its result. */
  calls: ToolCall[];
}

/** The usage a reply reports, as the Messages API names it. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * The usage of the fake's reply number `n`: different for every reply and in every kind, so a sum of the
 * counts the CLI recorded says exactly which replies went into it (issue 47's readers are checked by them).
 */
export function usageOfReply(n: number): Usage {
  return { input_tokens: 100 + 7 * n, output_tokens: 20 + 3 * n, cache_creation_input_tokens: 5 * n, cache_read_input_tokens: 11 * n };
}

export type Turn = { text: string } | { tool: string; input: Record<string, unknown>; text?: string };

export interface Script {
  /** Whether a request is the agent's own conversation; anything else is a side call and gets a short text. */
  isAgent(body: MessagesBody): boolean;
  next(conversation: Conversation): Turn;
  /** The usage to report for the agent's turn `next` just chose, where the script fixes it (a test that must know
   *  a turn's counts before it is played, e.g. to set a budget the turn crosses); else usageOfReply's. */
  usage?(conversation: Conversation, turn: Turn): Usage | null;
}

/** The fake's requests, the agent's turns the script played, and a summary of them for failure messages. */
export type FakeAnthropic = ScriptedModelServer<Conversation, Turn>;

export function startFakeAnthropic(script: Script): Promise<FakeAnthropic> {
  let messages = 0;
  let toolUses = 0;
  return startScriptedModelServer<Conversation, Turn, MessagesBody>(
    (req, res, played) => {
      const path = req.path.split('?')[0] ?? '';
      // The CLI's reachability probe (sent when non-essential traffic is allowed, e.g. during onboarding).
      if ((req.method === 'HEAD' || req.method === 'GET') && path === '/api/hello') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(req.method === 'GET' ? '{}' : undefined);
        return true;
      }
      if (req.method !== 'POST') return false;
      // Token counting, which some versions do before a long request.
      if (path === '/v1/messages/count_tokens') {
        json(res, { input_tokens: 1000 });
        return true;
      }
      if (path !== '/v1/messages') return false;
      const body = req.body as MessagesBody;
      let turn: Turn = { text: 'OK' };
      let conversation: Conversation | null = null;
      if (script.isAgent(body)) {
        conversation = conversationOf(body);
        turn = script.next(conversation);
        played(conversation, turn);
      }
      const n = ++messages;
      const usage = (conversation && script.usage?.(conversation, turn)) ?? usageOfReply(n);
      if (conversation) conversation.reply = { id: `msg_fake_${n}`, usage, at: Date.now() };
      reply(res, body, turn, `msg_fake_${n}`, () => `toolu_fake_${++toolUses}`, usage);
      return true;
    },
    (body) => (Array.isArray(body.messages) ? `model=${body.model} messages=${body.messages.length} tools=${body.tools?.length ?? 0}` : null),
  );
}

function conversationOf(body: MessagesBody): Conversation {
  const calls: ToolCall[] = [];
  const byId = new Map<string, ToolCall>();
  for (const m of body.messages ?? []) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) {
      if (b.type === 'tool_use' && b.id && b.name) {
        const call: ToolCall = { id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown>, result: '', isError: false };
        calls.push(call);
        byId.set(b.id, call);
      }
      if (b.type === 'tool_result' && b.tool_use_id) {
        const call = byId.get(b.tool_use_id);
        if (call) {
          call.result = textOf(b.content);
          call.isError = b.is_error === true;
        }
      }
    }
  }
  return { body, tools: (body.tools ?? []).map((t) => t.name), calls };
}

function textOf(content: string | ContentBlock[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((b) => (typeof b.text === 'string' ? b.text : b.content !== undefined ? textOf(b.content) : '')).join('\n');
}

/** Answers one /v1/messages request with `turn`, streamed when the request asks for a stream. */
function reply(res: ServerResponse, body: MessagesBody, turn: Turn, messageId: string, toolUseId: () => string, usage: Usage): void {
  const content: ContentBlock[] = [];
  if (turn.text) content.push({ type: 'text', text: turn.text });
  if ('tool' in turn) content.push({ type: 'tool_use', id: toolUseId(), name: turn.tool, input: turn.input });
  const stopReason = 'tool' in turn ? 'tool_use' : 'end_turn';
  const message = { id: messageId, type: 'message', role: 'assistant', model: body.model };
  if (!body.stream) {
    json(res, { ...message, content, stop_reason: stopReason, stop_sequence: null, usage });
    return;
  }
  sseStart(res);
  const event = (type: string, data: Record<string, unknown>) => sse(res, { type, ...data }, type);
  event('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      // The input arrives as JSON text in pieces, as the real API sends it.
      const input = JSON.stringify(block.input);
      const cut = Math.floor(input.length / 2);
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: input.slice(0, cut) } });
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: input.slice(cut) } });
    }
    event('content_block_stop', { index });
  });
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  event('message_stop', {});
  res.end();
}
