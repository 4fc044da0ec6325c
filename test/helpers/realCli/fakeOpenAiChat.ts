/**
 * A scripted model behind the OpenAI Chat Completions API (`POST …/chat/completions`), for the harness's
 * fake model server. Each request is answered by `next`, which reads the conversation so far (e.g. counts the
 * tool results) and returns one step: a tool call or a final text. Answers stream as the API does when the
 * client asks for `stream: true`, else come as one JSON completion.
 */
import type { ServerResponse } from 'node:http';
import { json, type ModelRequest, sse, sseStart } from './harness.js';

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** A string, or content parts (`[{ type: 'text', text }]`), or null beside tool calls. */
  content: unknown;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean;
}

export type ChatStep = { text: string } | { tool: string; args: Record<string, unknown> };

/** A message's text, whether content is a string or a list of text parts. */
export function messageText(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

/** The tool results in a conversation, in order. */
export function toolResults(body: ChatRequest): ChatMessage[] {
  return body.messages.filter((m) => m.role === 'tool');
}

/** The usage a completion reports, as the Chat Completions API names it. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * The usage of the fake's completion number `n`: different for every completion, so the counts a CLI recorded
 * say exactly which completions went into them (issue 47's readers are checked by them).
 */
export function usageOfCompletion(n: number): ChatUsage {
  return { prompt_tokens: 300 + 19 * n, completion_tokens: 40 + 7 * n, total_tokens: 340 + 26 * n };
}

/** A completion as the fake sent it: its request, the usage it reported and when (wall ms). */
export interface ChatReply {
  body: ChatRequest;
  usage: ChatUsage;
  at: number;
}

/** The answer function for startFakeModelServer: takes `POST …/chat/completions`, leaves the rest to 404.
 *  `replied` hears of each completion sent. */
export function openAiChat(next: (body: ChatRequest, req: ModelRequest) => ChatStep, replied?: (r: ChatReply) => void): (req: ModelRequest, res: ServerResponse) => boolean {
  let calls = 0;
  return (req, res) => {
    if (req.method !== 'POST' || !req.path.split('?')[0]!.endsWith('/chat/completions')) return false;
    const body = req.body as ChatRequest;
    const step = next(body, req);
    const id = `chatcmpl-${++calls}`;
    const model = body.model;
    const toolCall: ChatToolCall | null = 'tool' in step ? { id: `call_${calls}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(step.args) } } : null;
    const finish = toolCall ? 'tool_calls' : 'stop';
    const usage = usageOfCompletion(calls);
    replied?.({ body, usage, at: Date.now() });
    if (!body.stream) {
      const message = toolCall ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: (step as { text: string }).text };
      json(res, { id, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
      return true;
    }
    sseStart(res);
    const chunk = (delta: unknown, finish_reason: string | null, extra: object = {}) =>
      sse(res, { id, object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason }], ...extra });
    if (toolCall) chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall }] }, null);
    else chunk({ role: 'assistant', content: (step as { text: string }).text }, null);
    chunk({}, finish, { usage });
    sse(res, '[DONE]');
    res.end();
    return true;
  };
}
