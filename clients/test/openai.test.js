// The official `openai` npm client (7.x) through Caddy + llm_meta (tests 1
// and 2): an app reads meta.tools_used from the completion object (JSON) and
// from the chunk that carries `meta` (stream); the client keeps extra fields.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { openaiClient, readText, useStack } from '../lib/harness.js';
import { CREATED, JSON_META, JSON_TOOLS, SSE_META, SSE_TEXT, SSE_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

let stack;
let client;

useStack((s) => {
  stack = s;
  client = openaiClient(s);
});

describe('openai client, non-stream (test 1)', () => {
  test('gets the whole text and meta.tools_used', T, async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'json-tools', messages })
      .withResponse();
    assert.equal(response.status, 200);
    assert.equal(data.choices[0].message.content, JSON_TOOLS.text);
    // tool_calls are left as they came
    assert.deepEqual(data.choices[0].message.tool_calls.map((c) => c.function.name), ['get_weather', 'search_web']);
    // SPEC 4.2: choices[0].meta, then top-level meta, then tool_calls names
    assert.deepEqual(data.meta.tools_used, JSON_TOOLS.toolsUsed);
    // every key an upstream put in meta survives (4.1)
    assert.equal(data.meta.gateway, 'test-upstream');
    // ... and choices[i].meta is gone
    assert.equal('meta' in data.choices[0], false);
  });

  test('the gateway\'s own tools: meta.tools_used from its top-level meta, no tool_calls', T, async () => {
    const data = await client.chat.completions.create({ model: JSON_META.model, messages });
    assert.equal(data.choices[0].message.content, JSON_META.text);
    assert.equal(data.choices[0].message.tool_calls, undefined);
    assert.deepEqual(data.meta.tools_used, JSON_META.toolsUsed);
  });

  test('the upstream received the request without changes', T, async () => {
    const before = stack.upstream.requests.length;
    await client.chat.completions.create({ model: 'json-tools', messages, temperature: 0.2 });
    const got = stack.upstream.requests[before];
    assert.deepEqual(got.body, { model: 'json-tools', messages, temperature: 0.2 });
  });
});

describe('openai client, streaming (test 2)', () => {
  test('joins the deltas into the whole text; the meta chunk ends the stream normally', T, async () => {
    const stream = await client.chat.completions.create({ model: 'sse-tools', messages, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk); // no throw = no error from the meta chunk

    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, SSE_TOOLS.text);

    // the tool-call deltas reached the client untouched
    const names = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((t) => t.function?.name).filter(Boolean);
    assert.deepEqual(names, ['get_weather', 'search_web']);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
    // the client did not ask for usage: no usage chunk (test/openai-usage.test.js)
    assert.deepEqual(chunks.filter((c) => c.usage), []);

    // exactly one chunk carries meta, it is the last one, shaped as a chunk
    const withMeta = chunks.filter((c) => 'meta' in c);
    assert.equal(withMeta.length, 1);
    const metaChunk = chunks.at(-1);
    assert.equal(metaChunk, withMeta[0]);
    assert.deepEqual(metaChunk.choices, []);
    assert.equal(metaChunk.object, 'chat.completion.chunk');
    // ID, T and MODEL repeat the last chunk's (4.3)
    assert.equal(metaChunk.id, SSE_TOOLS.id);
    assert.equal(metaChunk.created, CREATED);
    assert.equal(metaChunk.model, SSE_TOOLS.model);
    assert.deepEqual(metaChunk.meta.tools_used, SSE_TOOLS.toolsUsed);
    assert.deepEqual(metaChunk.meta.usage, SSE_TOOLS.metaUsage);
  });

  test('the gateway\'s own tools: its meta-only event is folded into the one final meta chunk', T, async () => {
    const stream = await client.chat.completions.create({ model: SSE_META.model, messages, stream: true });
    let text = '';
    let toolsUsed;
    const metaChunks = [];
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.meta) {
        metaChunks.push(c);
        toolsUsed = c.meta.tools_used;
      }
    }
    assert.equal(text, SSE_META.text);
    assert.equal(metaChunks.length, 1);
    assert.equal(metaChunks[0].object, 'chat.completion.chunk', 'a chunk, not the upstream\'s bare meta event');
    assert.deepEqual(toolsUsed, SSE_META.toolsUsed);
  });

  test('the stream helper (chat.completions.stream) accumulates text and tool calls without error', T, async () => {
    const runner = client.chat.completions.stream({ model: 'sse-tools', messages });
    const final = await runner.finalChatCompletion();
    const msg = final.choices[0].message;
    assert.equal(msg.content, SSE_TOOLS.text);
    assert.deepEqual(msg.tool_calls.map((t) => [t.function.name, t.function.arguments]), [
      ['get_weather', '{"city":"Paris"}'],
      ['search_web', '{"q":"Paris events"}'],
    ]);
    assert.equal(final.choices[0].finish_reason, 'tool_calls');
  });

  // The client asks for usage, so that every upstream event reaches it
  // (without, llm_meta withholds the usage chunk: test/openai-usage.test.js).
  test('raw bytes: upstream events pass byte-for-byte, one meta event before [DONE]', T, async () => {
    const res = await fetch(`${stack.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'sse-tools', messages, stream: true, stream_options: { include_usage: true } }),
      signal: AbortSignal.timeout(15_000),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    assert.equal(res.headers.get('content-length'), null);
    const body = await readText(res);

    const wire = SSE_TOOLS.wire({ includeUsage: true });
    const upstreamEvents = wire.slice(0, -'data: [DONE]\n\n'.length);
    assert.ok(body.startsWith(upstreamEvents), 'upstream events are forwarded unchanged');
    assert.ok(body.endsWith('\n\ndata: [DONE]\n\n'));
    const inserted = body.slice(upstreamEvents.length, -'data: [DONE]\n\n'.length);
    // one line and a blank line
    assert.match(inserted, /^data: [^\n]+\n\n$/);
    const meta = JSON.parse(inserted.slice('data: '.length));
    assert.deepEqual(Object.keys(meta).sort(), ['choices', 'created', 'id', 'meta', 'model', 'object']);
    assert.deepEqual(meta, {
      id: SSE_TOOLS.id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model: SSE_TOOLS.model,
      choices: [],
      meta: { tools_used: SSE_TOOLS.toolsUsed, usage: SSE_TOOLS.metaUsage },
    });
  });

  // sse-text's upstream reports no usage even when asked, as some gateways do.
  test('a stream with nothing to add passes byte-identical (no meta event)', T, async () => {
    const res = await fetch(`${stack.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'sse-text', messages, stream: true }),
      signal: AbortSignal.timeout(15_000),
    });
    assert.equal(await readText(res), SSE_TEXT.wire());

    const stream = await client.chat.completions.create({ model: 'sse-text', messages, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    assert.equal(text, SSE_TEXT.text);
  });
});
