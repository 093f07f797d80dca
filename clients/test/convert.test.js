// The other direction (test 5): upstream streams written by the real AI SDK
// writers (ai@4 data stream, as Agent Hustle sends it; ai@7 UI message
// stream), converted by llm_meta into OpenAI chunks (SPEC section 5), read
// by the official openai client.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { openaiClient, readText, sseEvents, useStack } from '../lib/harness.js';
import { V4_DATA, V7_ABORT, V7_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

let stack;
let client;

useStack((s) => {
  stack = s;
  client = openaiClient(s);
});

const cases = [
  { name: 'AI SDK 4 data stream (ai@4.3.19 pipeDataStreamToResponse + streamText)', s: V4_DATA, protoHeader: 'x-vercel-ai-data-stream', usage: V4_DATA.usage },
  { name: 'AI SDK 7 UI message stream (ai@7 createUIMessageStream + streamText)', s: V7_UI, protoHeader: 'x-vercel-ai-ui-message-stream', usage: undefined },
];

for (const { name, s, protoHeader, usage } of cases) {
  describe(`${name} (test 5)`, () => {
    test('openai client, streaming: the text, then a final meta with tools_used, hustle.reasoning, structured_result', T, async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model: s.model, messages, stream: true })
        .withResponse();
      assert.match(response.headers.get('content-type'), /^text\/event-stream/);
      assert.equal(response.headers.get(protoHeader), null, 'protocol header dropped');

      const chunks = [];
      for await (const c of stream) chunks.push(c); // ends normally, no throw

      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
      assert.equal(text, s.text);

      // every chunk is a chat.completion.chunk with one id and the request's model
      for (const c of chunks) {
        assert.equal(c.object, 'chat.completion.chunk');
        assert.equal(c.id, s.messageId, 'ID is the message id the upstream announced');
        assert.equal(c.model, s.model, 'MODEL is the request model');
        assert.equal(typeof c.created, 'number');
      }
      assert.equal(chunks[0].choices[0].delta.role, 'assistant');

      const fin = chunks.filter((c) => c.choices[0]?.finish_reason);
      assert.equal(fin.length, 1);
      assert.equal(fin[0].choices[0].finish_reason, s.finishReason);
      if (usage) assert.deepEqual(fin[0].usage, usage);

      // exactly one meta chunk, the last one
      assert.equal(chunks.filter((c) => 'meta' in c).length, 1);
      const last = chunks.at(-1);
      assert.deepEqual(last.choices, []);
      assert.deepEqual(last.meta.tools_used, s.toolsUsed);
      assert.deepEqual(last.meta.hustle, s.hustle);
      assert.deepEqual(last.meta.hustle.reasoning, s.reasoning ?? s.hustle.reasoning);
      assert.deepEqual(last.meta.structured_result, s.structuredResult);
      assert.deepEqual(last.meta.usage, s.metaUsage); // none in the AI SDK 7 writer's stream
      assert.equal(last.meta.cost_usd, s.costUsd);
    });

    test('raw: one data line per event, valid chunks, meta event then [DONE]', T, async () => {
      const res = await fetch(`${stack.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: s.model, messages, stream: true }),
        signal: AbortSignal.timeout(15_000),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('x-accel-buffering'), 'no');
      assert.equal(res.headers.get('content-length'), null);
      assert.equal(res.headers.get(protoHeader), null);

      const body = await readText(res);
      assert.ok(body.endsWith('data: [DONE]\n\n'));
      const events = sseEvents(body);
      for (const e of events) assert.match(e.raw, /^data: [^\n]+$/, 'one line per event');
      assert.equal(events.at(-1).data, '[DONE]');
      const objs = events.slice(0, -1).map((e) => JSON.parse(e.data));
      const meta = objs.at(-1);
      assert.deepEqual(Object.keys(meta).sort(), ['choices', 'created', 'id', 'meta', 'model', 'object']);
      assert.deepEqual(meta.choices, []);
      for (const o of objs.slice(0, -1)) {
        assert.equal(o.choices.length, 1);
        assert.equal(o.choices[0].index, 0);
        assert.ok('finish_reason' in o.choices[0]);
      }
    });
  });
}

describe('an AI SDK 7 UI message stream aborted on the server (test 5)', () => {
  // ai@7 ends it with an `abort` part and [DONE], no `finish`: the client
  // must see an ordinary end, the text so far and finish_reason stop.
  test('openai client, streaming: the text so far, finish_reason stop, then [DONE]', T, async () => {
    const stream = await client.chat.completions.create({ model: V7_ABORT.model, messages, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c); // ends normally, no throw
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), V7_ABORT.text);
    for (const c of chunks) assert.equal(c.id, V7_ABORT.messageId);
    const fin = chunks.filter((c) => c.choices[0]?.finish_reason);
    assert.equal(fin.length, 1, 'one chunk with a finish_reason');
    assert.equal(fin[0].choices[0].finish_reason, V7_ABORT.finishReason);
  });
});
