// Optional (test 6): structured mode (SPEC 7) and edges, seen by real clients.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';

import { openaiClient, useStack } from '../lib/harness.js';
import { STRUCTURED, V4_ERROR } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const messages = [
  { role: 'system', content: 'You are JARVIS.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];

let stack;
let client;

useStack((s) => {
  stack = s;
  client = openaiClient(s);
});

// The openai client's types do not know the flag; extra body keys pass as they are.
const structuredRequest = (stream) => ({ model: STRUCTURED.model, messages, stream, enable_structured_output: true });

function assertStructuredRequestUpstream(n) {
  const up = stack.upstream.requests[n].body;
  assert.equal('enable_structured_output' in up, false, 'flag removed');
  assert.equal(up.response_format?.type, 'json_schema');
  assert.equal(up.response_format.json_schema.name, 'structured_reply');
  assert.deepEqual(up.response_format.json_schema.schema.required.slice().sort(), ['intent', 'reply']);
  assert.equal(up.messages[0].role, 'system');
  assert.ok(up.messages[0].content.startsWith('You are JARVIS.'), 'instruction appended to the first system message');
  assert.deepEqual(up.messages.slice(1), messages.slice(1));
}

describe('structured mode through the openai client (test 6)', () => {
  test('non-stream: content is the reply, meta.structured_metadata', T, async () => {
    const n = stack.upstream.requests.length;
    const data = await client.chat.completions.create(structuredRequest(false));
    assertStructuredRequestUpstream(n);
    assert.equal(data.choices[0].message.content, STRUCTURED.reply);
    assert.deepEqual(data.meta.structured_metadata, STRUCTURED.structuredMetadata);
  });

  test('stream: the deltas join to the reply (never the raw JSON); structured_metadata in the final meta chunk', T, async () => {
    const n = stack.upstream.requests.length;
    const stream = await client.chat.completions.create(structuredRequest(true));
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    assertStructuredRequestUpstream(n);

    const deltas = chunks.map((c) => c.choices[0]?.delta?.content).filter((d) => typeof d === 'string' && d !== '');
    assert.equal(deltas.join(''), STRUCTURED.reply);
    assert.ok(deltas.length > 1, 'the reply is streamed in pieces');
    assert.ok(deltas.every((d) => !d.includes('"intent"')), 'no raw JSON reaches the client');
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason, 'stop');

    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.equal(last.id, STRUCTURED.id);
    assert.deepEqual(last.meta.structured_metadata, STRUCTURED.structuredMetadata);
  });
});

describe('edges (test 6)', () => {
  test('an upstream HTTP error passes as it came: the openai client raises it', T, async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-scenario', messages }),
      (err) => err instanceof OpenAI.BadRequestError && err.status === 400 && /unknown scenario no-such-scenario/.test(err.message),
    );
  });

  test('a `3:` error part in a v4 data stream: the openai client gets the text so far, then an APIError', T, async () => {
    const stream = await client.chat.completions.create({ model: V4_ERROR.model, messages, stream: true });
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
      })(),
      (err) => err instanceof OpenAI.APIError && err.message.includes(V4_ERROR.error),
    );
    assert.equal(text, V4_ERROR.text);
  });

  test('GET passes through untouched', T, async () => {
    const res = await fetch(`${stack.base}/v1/models`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: { message: 'not found', type: 'invalid_request_error' } });
  });
});
