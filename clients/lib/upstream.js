// A local upstream "LLM gateway" for the tests: a node:http server on
// 127.0.0.1 (random port) that answers POST /v1/chat/completions with one
// scenario per request, chosen by the request's `model`:
//
//   json-tools  OpenAI non-stream JSON with content, tool_calls and meta
//   sse-tools   OpenAI SSE: content deltas, two streamed tool calls, finish,
//               usage chunk, [DONE] (written in odd-sized pieces)
//   sse-text    OpenAI SSE: content deltas only, finish "stop", [DONE]
//   structured  a structured-mode answer (JSON with `reply`), JSON or SSE
//   v4-data     AI SDK v4 data stream made by the real ai@4 writer
//               (pipeDataStreamToResponse + streamText on MockLanguageModelV1)
//   v4-error    ai@4 data stream: start step, text, then a `3:` error part
//   v5-ui       AI SDK v5 UI message stream made by the real ai@5 writer
//               (createUIMessageStream + pipeUIMessageStreamToResponse +
//               streamText on MockLanguageModelV2)
//
// A request without `model` (the JARVIS edge endpoint sends none unless
// configured) gets sse-tools when it asks for a stream, else json-tools.
// Every request body is recorded in `requests` for assertions.

import http from 'node:http';
import { z } from 'zod';

import {
  formatDataStreamPart,
  pipeDataStreamToResponse,
  streamText as streamText4,
  tool as tool4,
} from 'ai4';
import { MockLanguageModelV1, simulateReadableStream as simulate4 } from 'ai4/test';

import {
  createUIMessageStream,
  pipeUIMessageStreamToResponse,
  streamText as streamText5,
  tool as tool5,
} from 'ai';
import { MockLanguageModelV2, simulateReadableStream as simulate5 } from 'ai/test';

// ---------------------------------------------------------------------------
// Scenario data (exported so tests can compare with what they receive).

export const CREATED = 1735689600;

export const JSON_TOOLS = {
  text: 'Paris is sunny ☀️, 21 °C. I also searched the web for “Paris events”.',
  // upstream meta: choices[0].meta and top-level meta (SPEC 4.2 merge)
  toolsUsed: ['memory_lookup', 'get_weather', 'search_web'],
  body() {
    return {
      id: 'chatcmpl-json-1',
      object: 'chat.completion',
      created: CREATED,
      model: 'json-tools',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.text,
            refusal: null,
            tool_calls: [
              { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_s1', type: 'function', function: { name: 'search_web', arguments: '{"q":"Paris events"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
          meta: { tools_used: ['memory_lookup'] },
        },
      ],
      usage: { prompt_tokens: 31, completion_tokens: 42, total_tokens: 73 },
      meta: { tools_used: ['memory_lookup'], gateway: 'test-upstream' },
    };
  },
};

export const SSE_TOOLS = {
  id: 'chatcmpl-sse-1',
  model: 'sse-tools',
  textParts: ['Let me check ', 'the weather ☀️ ', 'and search the web – ', 'one moment.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['get_weather', 'search_web'],
  finishReason: 'tool_calls',
  usage: { prompt_tokens: 25, completion_tokens: 19, total_tokens: 44 },
  events() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model, system_fingerprint: 'fp_test' };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    const ev = [];
    ev.push(ch({ role: 'assistant', content: '', refusal: null }));
    for (const t of this.textParts) ev.push(ch({ content: t }));
    ev.push(ch({ tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    ev.push(ch({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    ev.push(ch({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    ev.push(ch({ tool_calls: [{ index: 1, id: 'call_s1', type: 'function', function: { name: 'search_web', arguments: '' } }] }));
    ev.push(ch({ tool_calls: [{ index: 1, function: { arguments: '{"q":"Paris events"}' } }] }));
    ev.push(ch({}, this.finishReason));
    ev.push({ ...base, choices: [], usage: this.usage });
    return ev;
  },
  // The exact bytes the upstream sends.
  wire() {
    return this.events().map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
  },
};

export const SSE_TEXT = {
  id: 'chatcmpl-sse-2',
  model: 'sse-text',
  textParts: ['Hello', ', world', '! Ünïcödé ✓'],
  get text() { return this.textParts.join(''); },
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const ev = [ch({ role: 'assistant', content: '' }), ...this.textParts.map((t) => ch({ content: t })), ch({}, 'stop')];
    return ev.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
  },
};

// Structured mode (SPEC 7): what a model answers under the json_schema
// response_format. `reply` is not the first key, as the instruction asks for
// entities first; the streamed JSON escapes every non-ASCII character
// (\uXXXX, a surrogate pair for U+1F324) and is cut every 5 characters, so
// escapes are split across deltas.
export const STRUCTURED = {
  model: 'structured',
  id: 'chatcmpl-structured-1',
  reply: '**Paris**: sunny 🌤 ☀️, 21 °C.\nEnjoy "the" day!',
  get object() {
    return {
      entities: [{ name: 'Paris', type: 'location' }],
      reply: this.reply,
      intent: 'question',
      requires_user_action: false,
      topics: ['weather', 'travel'],
      scheduling_intent: { detected: false, datetime_mentioned: '' },
    };
  },
  structuredMetadata: {
    intent: 'question',
    requires_user_action: false,
    entities: [{ name: 'Paris', type: 'location' }],
    topics: ['weather', 'travel'],
    scheduling: { detected: false, datetime_mentioned: '' },
  },
  // the model's content as JSON text, non-ASCII escaped
  content() {
    return JSON.stringify(this.object).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  },
  body() {
    return {
      id: this.id, object: 'chat.completion', created: CREATED, model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.content() }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 40, total_tokens: 90 },
    };
  },
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const c = this.content();
    const ev = [ch({ role: 'assistant', content: '' })];
    for (let i = 0; i < c.length; i += 5) ev.push(ch({ content: c.slice(i, i + 5) }));
    ev.push(ch({}, 'stop'));
    return ev.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
  },
};

// Agent Hustle style data elements (shared/notes/seeds-origin.md b.4).
export const HUSTLE_REASONING = {
  type: 'reasoning',
  thinking: 'The user wants the weather in Paris; get_weather answers that.',
  activeIntent: 'weather_lookup',
  categories: ['weather', 'travel'],
  confidence: 0.9,
};
export const HUSTLE_PATH_INFO = { type: 'path_info', tokensIn: 1200, tokensOut: 85, costUsd: 0.0042 };

export const V4_DATA = {
  model: 'v4-data',
  messageId: 'msg-v4-hustle',
  textParts: ['Checking ', 'Paris… ', 'it is sunny, 21 °C.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['get_weather'],
  finishReason: 'tool_calls', // the converter maps tool-calls -> tool_calls
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  hustle: { reasoning: HUSTLE_REASONING, path_info: HUSTLE_PATH_INFO },
  // SPEC 5.1 "Hustle summary"
  structuredResult: {
    type: 'key_value',
    entries: [
      { key: 'Intent', value: 'weather_lookup' },
      { key: 'Reasoning', value: HUSTLE_REASONING.thinking },
      { key: 'Categories', value: 'weather, travel' },
      { key: 'Confidence', value: '0.9' },
      { key: 'Tokens', value: '1200 in / 85 out' },
      { key: 'Cost', value: '$0.0042' },
    ],
  },
};

export const V5_UI = {
  model: 'v5-ui',
  messageId: 'msg-v5-ui',
  textParts: ['Looking up ', 'Paris… ', 'sunny, 21 °C ☀️'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['get_weather'],
  finishReason: 'tool_calls',
  reasoning: {
    type: 'reasoning',
    thinking: 'Weather question: call get_weather for Paris.',
    activeIntent: 'weather_lookup',
    confidence: 0.9,
  },
  get hustle() { return { reasoning: this.reasoning }; },
  get structuredResult() {
    return {
      type: 'key_value',
      entries: [
        { key: 'Intent', value: 'weather_lookup' },
        { key: 'Reasoning', value: this.reasoning.thinking },
        { key: 'Confidence', value: '0.9' },
      ],
    };
  },
};

// ---------------------------------------------------------------------------
// Writers.

// Writes `s` in odd-sized pieces (split inside lines and inside multi-byte
// UTF-8 characters) with a flush between pieces, like a real network stream.
async function writeInPieces(res, s, piece = 7) {
  const buf = Buffer.from(s, 'utf8');
  for (let i = 0; i < buf.length; i += piece) {
    if (!res.write(buf.subarray(i, i + piece))) {
      await new Promise((r) => res.once('drain', r));
    }
    await new Promise((r) => setImmediate(r));
  }
  res.end();
}

function sendJSON(res, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendSSE(res, wire) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  res.flushHeaders();
  return writeInPieces(res, wire);
}

// AI SDK v4 data stream, produced by ai@4.3.19 itself.
function sendV4DataStream(res) {
  const s = V4_DATA;
  pipeDataStreamToResponse(res, {
    execute: async (writer) => {
      // `2:` data parts, as Agent Hustle sends them.
      writer.writeData(HUSTLE_REASONING);
      writer.writeData(HUSTLE_PATH_INFO);
      const result = streamText4({
        model: new MockLanguageModelV1({
          modelId: 'mock-v1',
          doStream: async () => ({
            stream: simulate4({
              chunkDelayInMs: 2,
              chunks: [
                ...s.textParts.map((t) => ({ type: 'text-delta', textDelta: t })),
                { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'call-v4-1', toolName: 'get_weather', argsTextDelta: '{"city":' },
                { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'call-v4-1', toolName: 'get_weather', argsTextDelta: '"Paris"}' },
                { type: 'tool-call', toolCallType: 'function', toolCallId: 'call-v4-1', toolName: 'get_weather', args: '{"city":"Paris"}' },
                { type: 'finish', finishReason: 'tool-calls', usage: { promptTokens: 12, completionTokens: 7 } },
              ],
            }),
            rawCall: { rawPrompt: null, rawSettings: {} },
          }),
        }),
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: tool4({
            description: 'Current weather for a city',
            parameters: z.object({ city: z.string() }),
            execute: async ({ city }) => ({ city, tempC: 21, sky: 'sunny' }),
          }),
        },
        toolCallStreaming: true,
        experimental_generateMessageId: () => s.messageId,
      });
      result.mergeIntoDataStream(writer);
    },
  });
}

// An ai@4 data stream that fails after some text: the writer turns the
// thrown error into a `3:` part.
export const V4_ERROR = { model: 'v4-error', text: 'Partial answer ', error: 'upstream exploded' };
function sendV4ErrorStream(res) {
  pipeDataStreamToResponse(res, {
    execute: async (writer) => {
      writer.write(formatDataStreamPart('start_step', { messageId: 'msg-v4-error' }));
      writer.write(formatDataStreamPart('text', V4_ERROR.text));
      await new Promise((r) => setTimeout(r, 5));
      throw new Error(V4_ERROR.error);
    },
    onError: (err) => err.message,
  });
}

// AI SDK v5 UI message stream, produced by ai@5 itself.
function sendV5UIMessageStream(res) {
  const s = V5_UI;
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      const result = streamText5({
        model: new MockLanguageModelV2({
          modelId: 'mock-v2',
          doStream: async () => ({
            stream: simulate5({
              chunkDelayInMs: 2,
              chunks: [
                { type: 'stream-start', warnings: [] },
                { type: 'text-start', id: 't1' },
                ...s.textParts.map((t) => ({ type: 'text-delta', id: 't1', delta: t })),
                { type: 'text-end', id: 't1' },
                { type: 'tool-input-start', id: 'call-v5-1', toolName: 'get_weather' },
                { type: 'tool-input-delta', id: 'call-v5-1', delta: '{"city":"Paris"}' },
                { type: 'tool-input-end', id: 'call-v5-1' },
                { type: 'tool-call', toolCallId: 'call-v5-1', toolName: 'get_weather', input: '{"city":"Paris"}' },
                { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 } },
              ],
            }),
          }),
        }),
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: tool5({
            description: 'Current weather for a city',
            inputSchema: z.object({ city: z.string() }),
            execute: async ({ city }) => ({ city, tempC: 21, sky: 'sunny' }),
          }),
        },
      });
      writer.merge(result.toUIMessageStream({ generateMessageId: () => s.messageId }));
      // a data-* part (Hustle-style reasoning object)
      writer.write({ type: 'data-reasoning', data: s.reasoning });
    },
  });
  pipeUIMessageStreamToResponse({ response: res, stream });
}

// ---------------------------------------------------------------------------

export async function startUpstream() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try { body = JSON.parse(raw); } catch { /* not JSON */ }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body, raw });
      if (req.method !== 'POST' || !body || typeof body !== 'object') {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const scenario = body.model ?? (body.stream ? 'sse-tools' : 'json-tools');
      try {
        switch (scenario) {
          case 'json-tools': return sendJSON(res, JSON_TOOLS.body());
          case 'sse-tools': return await sendSSE(res, SSE_TOOLS.wire());
          case 'sse-text': return await sendSSE(res, SSE_TEXT.wire());
          case 'structured': return body.stream ? await sendSSE(res, STRUCTURED.wire()) : sendJSON(res, STRUCTURED.body());
          case 'v4-data': return sendV4DataStream(res);
          case 'v4-error': return sendV4ErrorStream(res);
          case 'v5-ui': return sendV5UIMessageStream(res);
          default:
            res.writeHead(400, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify({ error: { message: `unknown scenario ${scenario}`, type: 'invalid_request_error' } }));
        }
      } catch (err) {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(String(err?.stack || err));
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}
