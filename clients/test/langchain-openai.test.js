// LangChain JS (@langchain/openai ChatOpenAI, chat completions) through
// Caddy + llm_meta. JSON: ChatOpenAI hands the raw completion to the app
// with __includeRawResponse, so meta.tools_used is read there. Streams:
// ChatOpenAI skips every chunk without choices, the final meta chunk
// included, so the app reads meta through its own fetch (lib/metatap.js);
// the stream itself must go on untroubled: text, tool calls, usage.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { concat } from '@langchain/core/utils/stream';

import { useStack } from '../lib/harness.js';
import { metaTap } from '../lib/metatap.js';
import { JSON_META, JSON_TOOLS, SSE_META, SSE_TEXT, SSE_TOOLS, V4_DATA, V7_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const question = 'What is the weather in Paris?';

const weatherTools = [
  { type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  { type: 'function', function: { name: 'search_web', description: 'search', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } },
];

let stack;

useStack((s) => {
  stack = s;
});

function chat(model, extra = {}) {
  return new ChatOpenAI({ model, apiKey: 'test-key', maxRetries: 0, timeout: 15_000, configuration: { baseURL: `${stack.base}/v1`, ...extra.configuration }, ...extra.fields });
}

// Streams `model`, joining the chunks as LangChain apps do (concat), with
// the app's meta tap on the client's fetch.
async function streamed(model, { tools } = {}) {
  const tap = metaTap();
  let llm = chat(model, { configuration: { fetch: tap.fetch } });
  if (tools) llm = llm.bindTools(tools);
  let full;
  for await (const chunk of await llm.stream(question)) full = full ? concat(full, chunk) : chunk;
  return { full, metas: await tap.metas() };
}

describe('LangChain ChatOpenAI invoke (JSON)', () => {
  for (const s of [JSON_TOOLS, JSON_META]) {
    test(`${s.model}: the text, and meta.tools_used from the raw response`, T, async () => {
      const msg = await chat(s.model, { fields: { __includeRawResponse: true } }).invoke(question);
      assert.equal(msg.content, s.text);
      assert.deepEqual(msg.additional_kwargs.__raw_response.meta.tools_used, s.toolsUsed);
      if (s === JSON_TOOLS) assert.deepEqual(msg.tool_calls.map((c) => c.name), ['get_weather', 'search_web']);
    });
  }
});

describe('LangChain ChatOpenAI stream', () => {
  test('OpenAI SSE with tool calls: text, tool calls, usage; tools_used from the final meta chunk', T, async () => {
    const { full, metas } = await streamed(SSE_TOOLS.model, { tools: weatherTools });
    assert.equal(full.content, SSE_TOOLS.text);
    assert.deepEqual(full.tool_calls.map((c) => [c.name, c.args]), [
      ['get_weather', { city: 'Paris' }],
      ['search_web', { q: 'Paris events' }],
    ]);
    assert.equal(full.usage_metadata?.input_tokens, SSE_TOOLS.usage.prompt_tokens);
    assert.equal(metas.length, 1);
    assert.deepEqual(metas[0].tools_used, SSE_TOOLS.toolsUsed);
  });

  for (const s of [SSE_META, V4_DATA, V7_UI]) {
    test(`${s.model}: text, and tools_used from the final meta chunk`, T, async () => {
      const { full, metas } = await streamed(s.model);
      assert.equal(full.content, s.text);
      assert.equal(metas.length, 1);
      assert.deepEqual(metas[0].tools_used, s.toolsUsed);
    });
  }

  test('OpenAI SSE without meta: the text, and no meta', T, async () => {
    const { full, metas } = await streamed(SSE_TEXT.model);
    assert.equal(full.content, SSE_TEXT.text);
    assert.deepEqual(metas, []);
  });
});
