// The JARVIS UI's client parsing (test 4): a parser written after the rules
// of the JARVIS chat page's sendMessage (Chat.tsx), its structured-result
// view and its Next.js route, as the project's research notes recorded them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { useStack } from '../lib/harness.js';
import { JSON_TOOLS, SSE_TOOLS, V4_DATA, V7_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };

// --- the JARVIS browser client, faithfully to its sendMessage ---------------
//
// SSE branch (Content-Type contains text/event-stream):
//  - decode chunks, split the buffer on "\n", keep the partial last line;
//  - trim() each line (so CRLF is tolerated);
//  - only lines starting with "data: " (with the space) are looked at;
//  - payload exactly "[DONE]" is skipped; invalid JSON is skipped silently;
//  - choices[0].delta.content, if a string, is appended;
//  - top-level meta: tools_used REPLACES the running value only if it is a
//    non-empty array of strings; structured_result replaces if != null;
//    prompt_trimmed_to is not read here;
//  - at the end: the trimmed text, or "No response.".
// Non-SSE fallback: content = obj.content ?? obj.message ?? obj.text; meta is
// the top-level meta (tools_used must be all strings; prompt_trimmed_to shown).
async function jarvisReadReply(res) {
  const contentType = res.headers.get('content-type') || '';
  if (contentType.includes('text/event-stream')) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let fullText = '';
    let toolsUsed;
    let structuredResult;
    const handleLine = (rawLine) => {
      const line = rawLine.trim();
      if (!line.startsWith('data: ')) return;
      const payload = line.slice('data: '.length);
      if (payload === '[DONE]') return;
      let parsed;
      try {
        parsed = JSON.parse(payload);
      } catch {
        return;
      }
      const delta = parsed?.choices?.[0]?.delta?.content;
      if (typeof delta === 'string') fullText += delta;
      if (parsed?.meta) {
        const tu = parsed.meta.tools_used;
        if (Array.isArray(tu) && tu.length > 0 && tu.every((t) => typeof t === 'string')) toolsUsed = tu;
        if (parsed.meta.structured_result != null) structuredResult = parsed.meta.structured_result;
      }
    };
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const l of lines) handleLine(l);
    }
    const meta = {};
    if (toolsUsed) meta.tools_used = toolsUsed;
    if (structuredResult != null) meta.structured_result = structuredResult;
    return { sse: true, content: fullText.trim() || 'No response.', meta, rest: buffer };
  }
  const obj = await res.json();
  const content = obj.content ?? obj.message ?? obj.text;
  const meta = {};
  const m = obj.meta;
  if (m && Array.isArray(m.tools_used) && m.tools_used.every((t) => typeof t === 'string')) meta.tools_used = m.tools_used;
  if (m && m.structured_result != null) meta.structured_result = m.structured_result;
  if (m && typeof m.prompt_trimmed_to === 'number') meta.prompt_trimmed_to = m.prompt_trimmed_to;
  return { sse: false, content, meta };
}

// What its StructuredResultView can render without React throwing.
function assertRenderable(sr) {
  assert.equal(typeof sr, 'object');
  assert.ok(sr !== null && !Array.isArray(sr));
  if (sr.type === 'key_value') {
    for (const e of sr.entries) {
      assert.equal(typeof e.key, 'string');
      assert.equal(typeof e.value, 'string');
    }
  }
}

// ---------------------------------------------------------------------------

let stack;

useStack((s) => {
  stack = s;
});

function post(path, body, headers = {}) {
  return fetch(`${stack.base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

const chat = (model) => post('/v1/chat/completions', {
  model,
  stream: true,
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
});

// What its Next.js route sends to the edge function.
function edgeBody(extra = {}) {
  const messages = [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'What is the weather in Paris?' },
  ];
  const last = messages.at(-1).content;
  return { message: last, messages, session_id: 'jarvis-ui-m3k9z', task: last, ...extra };
}

describe('JARVIS UI parser (test 4)', () => {
  test('OpenAI SSE through /v1/chat/completions: full text and final tools_used', T, async () => {
    const res = await chat('sse-tools');
    assert.equal(res.status, 200);
    const r = await jarvisReadReply(res);
    assert.equal(r.sse, true);
    assert.equal(r.content, SSE_TOOLS.text);
    assert.deepEqual(r.meta, { tools_used: SSE_TOOLS.toolsUsed });
    assert.equal(r.rest, '', 'stream ends with a complete line');
  });

  for (const s of [V4_DATA, V7_UI]) {
    test(`converted ${s.model} stream: full text, tools_used and the Hustle structured_result`, T, async () => {
      const r = await jarvisReadReply(await chat(s.model));
      assert.equal(r.sse, true);
      assert.equal(r.content, s.text);
      assert.deepEqual(r.meta.tools_used, s.toolsUsed);
      assert.deepEqual(r.meta.structured_result, s.structuredResult);
      assertRenderable(r.meta.structured_result);
    });
  }

  test('edge endpoint with X-Stream: true (the UI\'s real path): full text and tools_used', T, async () => {
    const n = stack.upstream.requests.length;
    const res = await post('/functions/v1/jarvis', edgeBody(), { 'X-Stream': 'true' });
    assert.equal(res.status, 200);
    const r = await jarvisReadReply(res);
    assert.equal(r.sse, true);
    assert.equal(r.content, SSE_TOOLS.text);
    assert.deepEqual(r.meta, { tools_used: SSE_TOOLS.toolsUsed });

    // what the upstream got (SPEC 6.2/6.3)
    const up = stack.upstream.requests[n];
    assert.equal(up.url, '/v1/chat/completions');
    assert.equal(up.body.stream, true);
    assert.equal(up.body.user, 'jarvis-ui-m3k9z');
    assert.deepEqual(up.body.messages, edgeBody().messages);
    for (const k of ['message', 'session_id', 'task']) assert.equal(k in up.body, false, `${k} removed`);
  });

  test('edge endpoint with X-Stream: true and a Hustle (v4 data stream) upstream', T, async () => {
    const r = await jarvisReadReply(await post('/functions/v1/jarvis', edgeBody({ model: V4_DATA.model }), { 'X-Stream': 'true' }));
    assert.equal(r.sse, true);
    assert.equal(r.content, V4_DATA.text);
    assert.deepEqual(r.meta.tools_used, V4_DATA.toolsUsed);
    assert.deepEqual(r.meta.structured_result, V4_DATA.structuredResult);
  });

  test('edge endpoint without X-Stream: the non-SSE fallback gets content and tools_used', T, async () => {
    const res = await post('/functions/v1/jarvis', edgeBody());
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    const r = await jarvisReadReply(res);
    assert.equal(r.sse, false);
    assert.equal(r.content, JSON_TOOLS.text);
    assert.deepEqual(r.meta, { tools_used: JSON_TOOLS.toolsUsed });
  });
});
