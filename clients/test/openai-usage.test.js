// Usage and cost of chat completions (SPEC 9) with the official `openai`
// npm client (7.x) through Caddy + llm_meta, whose `stream_usage` is on (the
// default): a stream whose client did not ask for usage must look to the
// client as it would without llm_meta, with meta.usage in the final meta
// chunk; one that asked gets its usage chunk and meta.usage; JSON replies
// get meta.usage and meta.cost_usd (OpenRouter's usage.cost, LiteLLM's
// x-litellm-response-cost header, else the price table).
//
// The scripted upstream behaves as OpenAI does: the usage chunk, and
// "usage": null on every other chunk, only when include_usage is asked.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';

import { openaiClient, readText, sseEvents, useStack } from '../lib/harness.js';
import { assertCost } from '../lib/meta.js';
import { costFrom, PRICE_TABLE, PRICES } from '../lib/prices.js';
import { postText } from '../lib/spliced.js';
import { JSON_COST, JSON_PRICED, JSON_TOOLS, LITELLM, SSE_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
const DONE = 'data: [DONE]\n\n';

let stack;
let client; // through Caddy
let direct; // straight to the scripted upstream

useStack((s) => {
  stack = s;
  client = openaiClient(s);
  direct = new OpenAI({ baseURL: `${s.upstream.url}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 15_000 });
}, { prices: PRICE_TABLE });

async function chunksOf(c, params) {
  const chunks = [];
  for await (const chunk of await c.chat.completions.create({ ...params, stream: true })) chunks.push(chunk);
  return chunks;
}

// A chunk without its "usage": null, which OpenAI adds to every chunk of a
// stream asked for usage.
function withoutNullUsage(chunk) {
  if (chunk.usage !== null) return chunk;
  const { usage: _, ...rest } = chunk;
  return rest;
}

// The body the request of `params` made upstream, the last one recorded.
const lastUpstreamBody = () => stack.upstream.requests.at(-1).body;

describe('chat stream without stream_options (stream_usage on)', () => {
  test('the client sees the chunks it sees without llm_meta, then one meta chunk with meta.usage', T, async () => {
    const params = { model: SSE_TOOLS.model, messages };
    const without = await chunksOf(direct, params);
    const chunks = await chunksOf(client, params);
    // llm_meta asked the upstream for usage
    assert.deepEqual(lastUpstreamBody().stream_options, { include_usage: true });

    assert.equal(chunks.length, without.length + 1, 'the same chunks and the meta chunk');
    // the chunks with choices pass as the upstream sent them, "usage": null
    // included (SPEC 9.1); apart from it, they are the ones the client gets
    // without llm_meta
    assert.deepEqual(chunks.slice(0, -1).map(withoutNullUsage), without);
    assert.deepEqual(chunks.filter((c) => c.usage), [], 'the usage chunk the client did not ask for is withheld');
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.meta, { tools_used: SSE_TOOLS.toolsUsed, usage: SSE_TOOLS.metaUsage });
  });

  test('raw bytes: the upstream\'s events less the usage chunk, then the meta event, then [DONE]', T, async () => {
    const body = { model: SSE_TOOLS.model, messages, stream: true };
    const { res, text } = await postText(stack.base, '/v1/chat/completions', body);
    assert.equal(res.status, 200);
    const asked = SSE_TOOLS.events({ includeUsage: true });
    const passed = asked.filter((e) => e.choices.length > 0).map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    assert.ok(text.startsWith(passed), 'every chunk with choices byte-identical, in order');
    assert.ok(text.endsWith(DONE));
    const inserted = sseEvents(text.slice(passed.length, -DONE.length));
    assert.equal(inserted.length, 1, 'one event between the chunks and [DONE]');
    assert.deepEqual(JSON.parse(inserted[0].data).meta.usage, SSE_TOOLS.metaUsage);
  });

  test('stream_options the client set are kept, include_usage false is asked as true', T, async () => {
    for (const stream_options of [{ include_usage: false }, { include_obfuscation: false }]) {
      const chunks = await chunksOf(client, { model: SSE_TOOLS.model, messages, stream_options });
      assert.deepEqual(lastUpstreamBody().stream_options, { ...stream_options, include_usage: true });
      assert.deepEqual(chunks.filter((c) => c.usage), [], 'the usage chunk is withheld');
      assert.deepEqual(chunks.at(-1).meta.usage, SSE_TOOLS.metaUsage);
    }
  });
});

describe('chat stream with stream_options.include_usage', () => {
  test('the client gets the usage chunk, and meta.usage in the meta chunk after it', T, async () => {
    const params = { model: SSE_TOOLS.model, messages, stream_options: { include_usage: true } };
    const chunks = await chunksOf(client, params);
    assert.deepEqual(lastUpstreamBody().stream_options, { include_usage: true }, 'sent as the client wrote it');
    const usageChunks = chunks.filter((c) => c.usage);
    assert.equal(usageChunks.length, 1);
    assert.deepEqual(usageChunks[0].usage, SSE_TOOLS.usage);
    assert.deepEqual(usageChunks[0].choices, []);
    assert.equal(chunks.at(-2), usageChunks[0], 'the usage chunk comes just before the meta chunk');
    assert.deepEqual(chunks.at(-1).meta, { tools_used: SSE_TOOLS.toolsUsed, usage: SSE_TOOLS.metaUsage });
  });

  test('raw bytes: every upstream event byte-identical, then the meta event', T, async () => {
    const body = { model: SSE_TOOLS.model, messages, stream: true, stream_options: { include_usage: true } };
    const { text } = await postText(stack.base, '/v1/chat/completions', body);
    const upstream = (await readText(await fetch(`${stack.upstream.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    }))).slice(0, -DONE.length);
    assert.ok(text.startsWith(upstream));
    const inserted = sseEvents(text.slice(upstream.length, -DONE.length));
    assert.equal(inserted.length, 1);
    assert.deepEqual(JSON.parse(inserted[0].data).meta.usage, SSE_TOOLS.metaUsage);
  });
});

describe('chat JSON: meta.usage and meta.cost_usd', () => {
  test('OpenRouter\'s usage.cost is meta.cost_usd; usage in the one shape, cached and reasoning tokens included', T, async () => {
    const data = await client.chat.completions.create({ model: JSON_COST.model, messages });
    assert.equal(data.choices[0].message.content, JSON_COST.text);
    assert.deepEqual(data.usage, JSON_COST.usage, 'the upstream\'s usage as it came');
    assert.deepEqual(data.meta.usage, JSON_COST.metaUsage);
    assert.equal(data.meta.cost_usd, JSON_COST.costUsd);
  });

  test('no cost from the upstream: the price table\'s row for the model gives it', T, async () => {
    const data = await client.chat.completions.create({ model: JSON_PRICED.model, messages });
    assert.deepEqual(data.meta.usage, JSON_PRICED.metaUsage);
    assertCost(data.meta.cost_usd, costFrom(PRICES.chat, JSON_PRICED.metaUsage));
  });

  test('LiteLLM\'s x-litellm-response-cost header is meta.cost_usd', T, async () => {
    const { data, response } = await client.chat.completions.create({ model: LITELLM.model, messages }).withResponse();
    assert.equal(response.headers.get('x-litellm-response-cost'), LITELLM.headers['x-litellm-response-cost'], 'the header reaches the client');
    assert.equal(data.choices[0].message.content, LITELLM.text);
    assert.deepEqual(data.meta, { usage: LITELLM.metaUsage, cost_usd: LITELLM.costUsd });
  });

  test('no cost and no price row: meta.usage, no meta.cost_usd', T, async () => {
    const data = await client.chat.completions.create({ model: JSON_TOOLS.model, messages });
    assert.deepEqual(data.meta.usage, JSON_TOOLS.metaUsage);
    assert.equal('cost_usd' in data.meta, false);
  });
});

describe('chat stream: meta.cost_usd', () => {
  test('LiteLLM\'s cost header reaches the meta chunk of a stream', T, async () => {
    const chunks = await chunksOf(client, { model: LITELLM.model, messages });
    assert.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), LITELLM.text);
    assert.deepEqual(chunks.at(-1).meta, { usage: LITELLM.metaUsage, cost_usd: LITELLM.costUsd });
  });
});
