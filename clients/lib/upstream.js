// A local upstream "LLM gateway" for the tests: a node:http server on
// 127.0.0.1 (random port) that answers POST /v1/chat/completions (and
// nothing else: 404) with one scenario per request, chosen by the request's
// `model`:
//
//   json-tools  OpenAI non-stream JSON with content, tool_calls and meta
//   json-meta   OpenAI non-stream JSON whose tools the gateway ran itself:
//               named in its top-level meta only, no tool_calls
//   sse-tools   OpenAI SSE: content deltas, two streamed tool calls, finish,
//               usage chunk, [DONE] (written in odd-sized pieces)
//   sse-text    OpenAI SSE: content deltas only, finish "stop", [DONE]
//   sse-meta    OpenAI SSE whose tools the gateway ran itself: content
//               deltas, finish, a meta-only event, [DONE]
//   structured  a structured-mode answer (JSON with `reply`), JSON or SSE
//   v4-data     Agent Hustle's data stream, written by the real ai@4
//               (writers/ai4: pipeDataStreamToResponse + streamText)
//   v4-error    ai@4 data stream: start step, text, then a `3:` error part
//   v7-ui       AI SDK UI message stream written by the real ai@7
//               (writers/ai7.js: createUIMessageStream + streamText), with
//               a tool call and a data-reasoning part
//   v7-abort    the same, aborted on the server after some text: ai@7 ends
//               it with an `abort` part and [DONE]
//   after-tools any request whose last message is a tool result (an agent
//               ran json-tools' or sse-tools' calls): a text answer, JSON
//               or SSE as asked
//
// A request without `model` (the JARVIS edge endpoint sends none unless
// configured) gets sse-tools when it asks for a stream, else json-tools.
// Every request body is recorded in `requests` for assertions. New
// scenarios (other protocols, usage) slot in as one more object here and
// one more case in startUpstream's switch.

import http from 'node:http';

import { sendDataStream, sendErrorStream } from '../writers/ai4/index.js';
import { sendAbortedUIMessageStream, sendUIMessageStream } from '../writers/ai7.js';

// ---------------------------------------------------------------------------
// Scenario data (exported so tests can compare with what they receive).

export const CREATED = 1735689600;

export const JSON_TOOLS = {
  model: 'json-tools',
  text: 'Paris is sunny ☀️, 21 °C. I also searched the web for “Paris events”.',
  // upstream meta: choices[0].meta and top-level meta (SPEC 4.2 merge)
  toolsUsed: ['memory_lookup', 'get_weather', 'search_web'],
  body() {
    return {
      id: 'chatcmpl-json-1',
      object: 'chat.completion',
      created: CREATED,
      model: this.model,
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

// The gateway ran its tools itself and reports them in `meta` only, with no
// tool_calls for the client to run: what most apps meet, and what an agent
// framework reads without entering a tool loop.
export const JSON_META = {
  model: 'json-meta',
  text: 'Paris is sunny, 21 °C; the Louvre is open until 18:00.',
  toolsUsed: ['web_search', 'memory_lookup'],
  finishReason: 'stop',
  body() {
    return {
      id: 'chatcmpl-json-meta',
      object: 'chat.completion',
      created: CREATED,
      model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 15, total_tokens: 35 },
      meta: { tools_used: this.toolsUsed },
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

// The answer after tool results (the last message has role `tool`), for
// clients that run json-tools' or sse-tools' calls themselves (agents):
// text only, no tools, no meta.
export const AFTER_TOOLS = {
  id: 'chatcmpl-after-tools',
  model: 'after-tools',
  text: 'It is sunny in Paris, 21 °C, and the Louvre has an evening opening.',
  body() {
    return {
      id: this.id, object: 'chat.completion', created: CREATED, model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 60, completion_tokens: 16, total_tokens: 76 },
    };
  },
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ev = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: this.text }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ];
    return ev.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
  },
};

// The streamed form of JSON_META: the gateway's own tools come in a
// meta-only event, which llm_meta withholds and folds into its final meta
// chunk.
export const SSE_META = {
  id: 'chatcmpl-sse-meta',
  model: 'sse-meta',
  textParts: ['Paris is sunny, ', '21 °C; the Louvre ', 'is open until 18:00.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['web_search', 'memory_lookup'],
  finishReason: 'stop',
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const ev = [ch({ role: 'assistant', content: '' }), ...this.textParts.map((t) => ch({ content: t })), ch({}, 'stop'), { meta: { tools_used: this.toolsUsed } }];
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

// Agent Hustle's data elements, as its `2:` parts carry them (objects with a
// `type`; docs/reference.md, stream conversion).
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
  // `2:` parts, as Agent Hustle sends them
  dataParts: [HUSTLE_REASONING, HUSTLE_PATH_INFO],
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

// An ai@4 data stream that fails after some text: the writer turns the
// thrown error into a `3:` part.
export const V4_ERROR = { model: 'v4-error', messageId: 'msg-v4-error', text: 'Partial answer ', error: 'upstream exploded' };

export const V7_UI = {
  model: 'v7-ui',
  messageId: 'msg-v7-ui',
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

// Aborted after the first text part: the client has that text, and the
// stream ends as a finished one (SPEC 5.2: `abort` is `finish` with
// finish_reason stop), with no tool call made.
export const V7_ABORT = {
  model: 'v7-abort',
  messageId: 'msg-v7-abort',
  textParts: ['Looking up ', 'Paris… ', 'sunny, 21 °C ☀️'],
  abortAfter: 1,
  get text() { return this.textParts.slice(0, this.abortAfter).join(''); },
  finishReason: 'stop',
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
      // Only the chat-completions path answers (other APIs get their own
      // path when their scenarios come), so a client that silently used
      // another API fails loudly.
      const path = req.url.split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/chat/completions' || !body || typeof body !== 'object') {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      // A request that carries tool results (an agent ran the tool calls of
      // json-tools or sse-tools) gets the model's answer after them.
      const afterTools = Array.isArray(body.messages) && body.messages.at(-1)?.role === 'tool';
      const scenario = afterTools ? 'after-tools' : body.model ?? (body.stream ? 'sse-tools' : 'json-tools');
      try {
        switch (scenario) {
          case 'json-tools': return sendJSON(res, JSON_TOOLS.body());
          case 'json-meta': return sendJSON(res, JSON_META.body());
          case 'sse-tools': return await sendSSE(res, SSE_TOOLS.wire());
          case 'sse-text': return await sendSSE(res, SSE_TEXT.wire());
          case 'after-tools': return body.stream ? await sendSSE(res, AFTER_TOOLS.wire()) : sendJSON(res, AFTER_TOOLS.body());
          case 'sse-meta': return await sendSSE(res, SSE_META.wire());
          case 'structured': return body.stream ? await sendSSE(res, STRUCTURED.wire()) : sendJSON(res, STRUCTURED.body());
          case 'v4-data': return sendDataStream(res, V4_DATA);
          case 'v4-error': return sendErrorStream(res, V4_ERROR);
          case 'v7-ui': return sendUIMessageStream(res, V7_UI);
          case 'v7-abort': return sendAbortedUIMessageStream(res, V7_ABORT);
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

// What a client should read from each scenario through llm_meta, as plain
// JSON: the Go client suites (clients/go) get it from lib/stack-cli.js, so
// their expectations and these bytes share one source.
export function expectations() {
  const e = (s, extra = {}) => ({ model: s.model, text: s.text, toolsUsed: s.toolsUsed ?? [], finishReason: s.finishReason, ...extra });
  return {
    'json-tools': e(JSON_TOOLS, { finishReason: 'tool_calls' }),
    'json-meta': e(JSON_META),
    'sse-tools': e(SSE_TOOLS),
    'sse-text': e(SSE_TEXT, { finishReason: 'stop' }),
    'sse-meta': e(SSE_META),
    'v4-data': e(V4_DATA, { messageId: V4_DATA.messageId }),
    'v7-ui': e(V7_UI, { messageId: V7_UI.messageId }),
    'v7-abort': e(V7_ABORT, { messageId: V7_ABORT.messageId }),
    'v4-error': { model: V4_ERROR.model, text: V4_ERROR.text, error: V4_ERROR.error },
  };
}
