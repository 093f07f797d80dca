// A local upstream "LLM gateway" for the tests: a node:http server on
// 127.0.0.1 (random port) that answers three APIs, each on its own path,
// with one scenario per request, chosen by the request's `model`:
//
//   POST /v1/chat/completions  lib/chat-scenarios.js (OpenAI chat JSON and
//                              SSE, the AI SDK streams Agent Hustle and
//                              Next.js apps send)
//   POST /v1/responses         lib/responses-scenarios.js (OpenAI Responses)
//   POST /v1/messages          lib/anthropic-scenarios.js (Anthropic Messages;
//                              /v1/messages/count_tokens too)
//   POST /v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse
//                              lib/gemini-scenarios.js (Gemini; the model is
//                              the path's)
//
// A model `<scenario>-cut` (sse-tools-cut, resp-tools-cut, claude-tools-cut,
// gemini-tools-cut) streams the first half of that scenario's events and
// ends the body there, as an upstream that crashed mid-answer (lib/cut.js;
// its JSON reply stays whole).
//
// Any other path or method is a 404, so a client that silently used
// another API fails loudly. A chat request without `model` (the JARVIS edge
// endpoint sends none unless configured) gets sse-tools when it asks for a
// stream, else json-tools. Every request is recorded in `requests` for
// assertions. New scenarios slot in as one more object in a scenario file
// and one more case (or table entry) here.

import http from 'node:http';

import { ANTHROPIC_SCENARIOS, COUNT_TOKENS } from './anthropic-scenarios.js';
import { cutBase, cutWire } from './cut.js';
import {
  AFTER_TOOLS, JSON_COST, JSON_META, JSON_PRICED, JSON_TOOLS, LITELLM, SSE_META, SSE_TEXT, SSE_TOOLS, STRUCTURED,
  V4_DATA, V4_ERROR, V7_ABORT, V7_UI,
} from './chat-scenarios.js';
import { GEMINI_PATH, GEMINI_SCENARIOS } from './gemini-scenarios.js';
import { RESPONSES_SCENARIOS } from './responses-scenarios.js';
import { sendDataStream, sendErrorStream } from '../writers/ai4/index.js';
import { sendAbortedUIMessageStream, sendUIMessageStream } from '../writers/ai7.js';

export * from './chat-scenarios.js';
export * from './responses-scenarios.js';
export * from './anthropic-scenarios.js';
export * from './gemini-scenarios.js';

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

function sendJSON(res, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(200, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendSSE(res, wire, headers = {}) {
  res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  res.flushHeaders();
  return writeInPieces(res, wire);
}

// ---------------------------------------------------------------------------

// The chat-completion scenarios.
async function answerChat(res, body) {
  // A request that carries tool results (an agent ran the tool calls of
  // json-tools or sse-tools) gets the model's answer after them.
  const afterTools = Array.isArray(body.messages) && body.messages.at(-1)?.role === 'tool';
  const scenario = afterTools ? 'after-tools' : body.model ?? (body.stream ? 'sse-tools' : 'json-tools');
  const includeUsage = body.stream_options?.include_usage === true;
  if (body.stream && cutBase(scenario) === SSE_TOOLS.model) return await sendSSE(res, cutWire(SSE_TOOLS.wire({ includeUsage })));
  switch (scenario) {
    case 'json-tools': return sendJSON(res, JSON_TOOLS.body());
    case 'json-meta': return sendJSON(res, JSON_META.body());
    case 'json-cost': return sendJSON(res, JSON_COST.body());
    case 'json-priced': return sendJSON(res, JSON_PRICED.body());
    case 'litellm-cost':
      return body.stream ? await sendSSE(res, LITELLM.wire({ includeUsage }), LITELLM.headers) : sendJSON(res, LITELLM.body(), LITELLM.headers);
    case 'sse-tools': return await sendSSE(res, SSE_TOOLS.wire({ includeUsage }));
    case 'sse-text': return await sendSSE(res, SSE_TEXT.wire());
    case 'after-tools': return body.stream ? await sendSSE(res, AFTER_TOOLS.wire()) : sendJSON(res, AFTER_TOOLS.body());
    case 'sse-meta': return await sendSSE(res, SSE_META.wire());
    case 'structured': return body.stream ? await sendSSE(res, STRUCTURED.wire()) : sendJSON(res, STRUCTURED.body());
    case 'v4-data': return sendDataStream(res, V4_DATA);
    case 'v4-error': return sendErrorStream(res, V4_ERROR);
    case 'v7-ui': return sendUIMessageStream(res, V7_UI);
    case 'v7-abort': return sendAbortedUIMessageStream(res, V7_ABORT);
    default: return unknownScenario(res, scenario);
  }
}

// A Responses or Messages scenario: its JSON, or its stream.
// `<scenario>-cut` streams the first half of its events (lib/cut.js).
const answerFrom = (scenarios) => async (res, body) => {
  const s = scenarios[body.model] ?? scenarios[cutBase(body.model)];
  if (!s) return unknownScenario(res, body.model);
  if (!body.stream) return sendJSON(res, s.body());
  return await sendSSE(res, s === scenarios[body.model] ? s.wire() : cutWire(s.wire()));
};

const routes = {
  '/v1/chat/completions': answerChat,
  '/v1/responses': answerFrom(RESPONSES_SCENARIOS),
  '/v1/messages': answerFrom(ANTHROPIC_SCENARIOS),
  '/v1/messages/count_tokens': async (res) => sendJSON(res, COUNT_TOKENS),
};

// A Gemini method (the model and whether it streams are in the path): its
// JSON reply, or its event stream; only alt=sse streams, as the clients ask.
async function answerGemini(res, model, method, query) {
  const s = GEMINI_SCENARIOS[model] ?? GEMINI_SCENARIOS[cutBase(model)];
  if (!s) return unknownScenario(res, model);
  if (method === 'generateContent') return sendJSON(res, s.body());
  if (new URLSearchParams(query).get('alt') !== 'sse') return unknownScenario(res, `${model} without alt=sse`);
  return await sendSSE(res, s === GEMINI_SCENARIOS[model] ? s.wire() : cutWire(s.wire()));
}

function unknownScenario(res, model) {
  res.writeHead(400, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: { message: `unknown scenario ${model}`, type: 'invalid_request_error' } }));
}

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
      const [path, query = ''] = req.url.split('?');
      const gemini = GEMINI_PATH.exec(path);
      const route = gemini ? (r) => answerGemini(r, gemini[1], gemini[2], query) : routes[path];
      const answer = req.method === 'POST' && body && typeof body === 'object' ? route : undefined;
      if (!answer) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      try {
        await answer(res, body);
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
  const e = (s, extra = {}) => ({
    model: s.model, text: s.text, toolsUsed: s.toolsUsed ?? [], finishReason: s.finishReason, usage: s.metaUsage, costUsd: s.costUsd, ...extra,
  });
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
