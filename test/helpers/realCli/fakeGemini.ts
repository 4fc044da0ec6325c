/**
 * A fake Gemini API (generativelanguage v1beta) for the real Gemini CLI: streams scripted turns (text or one
 * function call) as server-sent GenerateContentResponse chunks, and answers the side calls the CLI makes on
 * its own (the model router's JSON classification, token counts) without involving the script.
 *
 * The script sees the conversation as the CLI sends it back: every function call the model made with the
 * response the CLI returned for it, and the function declarations the CLI offers. So each step follows from
 * what really happened (a claim's token is read from the claim's result), like a model's would.
 */
import { json, sse, sseStart, startScriptedModelServer, type ScriptedModelServer } from './harness.js';

/** One part of a Content, as far as the fake reads it. */
export interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response?: unknown };
}

export interface Content {
  role?: string;
  parts?: Part[];
}

/** The body of POST /v1beta/models/<model>:streamGenerateContent and :generateContent. */
export interface GenerateBody {
  contents: Content[];
  systemInstruction?: Content | string;
  tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
  generationConfig?: { responseMimeType?: string; responseJsonSchema?: JsonSchema; responseSchema?: JsonSchema };
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  enum?: unknown[];
}

/** A function call the model made, with what the CLI answered. */
export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
  /** The functionResponse's `response` object; undefined while the call has no response yet. */
  response: unknown;
  /** `response` as JSON text ('' without one), for searching. */
  result: string;
}

export interface Conversation {
  body: GenerateBody;
  /** The model the CLI asked for. */
  model: string;
  /** Function declarations the request offers, by name. */
  tools: string[];
  /** Every function call in the conversation, in order, with its response. */
  calls: ToolCall[];
  /** All text of the conversation (system instruction and contents). */
  text: string;
  /** What the fake answered it with: the usage it reported and when (wall ms, as it began the stream). */
  reply?: { usage: UsageMetadata; at: number };
}

export type Turn = { text: string } | { call: string; args: Record<string, unknown>; text?: string };

export interface Script {
  next(conversation: Conversation): Turn;
}

/** The fake's requests, the agent's turns the script played, and a summary of them for failure messages. */
export type FakeGemini = ScriptedModelServer<Conversation, Turn>;

export function startFakeGemini(script: Script): Promise<FakeGemini> {
  let streams = 0;
  return startScriptedModelServer<Conversation, Turn, GenerateBody>(
    (req, res, played) => {
      if (req.method !== 'POST') return false;
      const m = /^\/v1beta\/models\/([^:/?]+):(\w+)/.exec(req.path);
      if (!m) return false;
      const [, model = '', method] = m;
      const body = req.body as GenerateBody;
      if (method === 'countTokens') {
        json(res, { totalTokens: 1000 });
        return true;
      }
      if (method === 'generateContent') {
        // Side calls (the model router's complexity score and the like) ask for JSON in a schema: any valid
        // answer will do, since every model the router can pick is this fake.
        json(res, chunk([{ text: sideAnswer(body) }], 'STOP'));
        return true;
      }
      if (method !== 'streamGenerateContent') return false;
      const conversation = conversationOf(model, body);
      // The agent's own turns offer the tools; anything else streamed is a side call.
      let turn: Turn = { text: 'OK' };
      const usage = usageOfStream(++streams);
      if (conversation.tools.length > 0) {
        turn = script.next(conversation);
        played(conversation, turn);
        conversation.reply = { usage, at: Date.now() };
      }
      sseStart(res);
      // Text and function call in separate chunks, the way the API streams them.
      if (turn.text) sse(res, chunk([{ text: turn.text }], 'call' in turn ? undefined : 'STOP', usage));
      if ('call' in turn) sse(res, chunk([{ functionCall: { name: turn.call, args: turn.args } }], 'STOP', usage));
      res.end();
      return true;
    },
    (body) => (Array.isArray(body.contents) ? `contents=${body.contents.length}` : null),
  );
}

function conversationOf(model: string, body: GenerateBody): Conversation {
  const calls: ToolCall[] = [];
  const text: string[] = [textOf(body.systemInstruction)];
  for (const c of body.contents ?? []) {
    for (const p of c.parts ?? []) {
      if (typeof p.text === 'string' && !p.thought) text.push(p.text);
      if (p.functionCall) calls.push({ name: p.functionCall.name, args: p.functionCall.args ?? {}, response: undefined, result: '' });
      if (p.functionResponse) {
        // Responses follow their calls in order; the first unanswered call of that name is this one's.
        const call = calls.find((k) => k.response === undefined && k.name === p.functionResponse!.name);
        if (call) {
          call.response = p.functionResponse.response ?? null;
          call.result = JSON.stringify(call.response);
        }
      }
    }
  }
  const tools = (body.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((d) => d.name));
  return { body, model, tools, calls, text: text.join('\n') };
}

function textOf(content: Content | string | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return (content.parts ?? []).map((p) => p.text ?? '').join('\n');
}

/** A value that fits a JSON schema (Gemini's upper-case type names or standard ones). */
function fill(schema: JsonSchema | undefined, key = ''): unknown {
  if (!schema) return 'OK';
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? 'string')).toLowerCase();
  if (type === 'object') return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, fill(v, k)]));
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return /score/i.test(key) ? 1 : 0;
  if (type === 'boolean') return false;
  return 'OK';
}

function sideAnswer(body: GenerateBody): string {
  const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
  if (schema) return JSON.stringify(fill(schema));
  return body.generationConfig?.responseMimeType === 'application/json' ? '{}' : 'OK';
}

/** The usage a response reports, as the Gemini API names it. */
export interface UsageMetadata {
  promptTokenCount: number;
  cachedContentTokenCount: number;
  candidatesTokenCount: number;
  thoughtsTokenCount: number;
  totalTokenCount: number;
}

/**
 * The usage of the fake's streamed response number `n` (side calls report response 0's): different for every
 * response and in every kind, so the counts a CLI recorded say exactly which responses went into them.
 */
export function usageOfStream(n: number): UsageMetadata {
  const prompt = 200 + 17 * n;
  const out = 30 + 5 * n;
  const thoughts = 2 * n;
  return { promptTokenCount: prompt, cachedContentTokenCount: n, candidatesTokenCount: out, thoughtsTokenCount: thoughts, totalTokenCount: prompt + out + thoughts };
}

function chunk(parts: Part[], finishReason?: string, usage: UsageMetadata = usageOfStream(0)): unknown {
  return { candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }], usageMetadata: usage, modelVersion: 'fake' };
}
