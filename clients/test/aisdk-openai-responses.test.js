// AI SDK 7 with @ai-sdk/openai's Responses model (openai(id), the
// provider's default, and openai.responses(id)) through Caddy + llm_meta
// (SPEC 4.4, 9). The provider has no hook for extra fields: an app reads
// meta from the raw chunks (includeRawChunks), where the response of the
// terminal response.completed carries it, and from the response body
// (include.responseBody) of generateText.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';

import {
  assertNoError, callParts, clientCalls, collect, finishOf, generate, providerCalls, rawValues, textOf, tools,
} from '../lib/aisdk.js';
import { useStack } from '../lib/harness.js';
import { assertMeta } from '../lib/meta.js';
import { PRICE_TABLE, PRICES } from '../lib/prices.js';
import { RESP_FAILED, RESP_INCOMPLETE, RESP_META, RESP_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };

let stack;
let openai;

useStack((s) => {
  stack = s;
  openai = createOpenAI({ baseURL: `${s.base}/v1`, apiKey: 'test-key' });
}, { prices: PRICE_TABLE });

// The calls for the app to run; the SDK reports the gateway's web search
// (a web_search_call item) as a call the provider executed.
const expectedCalls = (s) => (s.calls ?? []).map((c) => [c.name, JSON.parse(c.arguments)]);
const expectedProviderCalls = (s) => (s === RESP_META ? ['web_search'] : []);
const finishReason = (s) => ({ incomplete: 'length', failed: 'error' }[s.end] ?? (s.calls ? 'tool-calls' : 'stop'));
const SCENARIOS = [RESP_TOOLS, RESP_META, RESP_INCOMPLETE, RESP_FAILED];

describe('AI SDK 7 streamText via @ai-sdk/openai (Responses)', () => {
  for (const s of SCENARIOS) {
    test(`${s.model}: text, tool calls, usage, the error of a failed response; meta from the raw terminal event`, T, async () => {
      const before = stack.upstream.requests.length;
      const { parts, errors, result } = await collect(openai(s.model), { tools });
      assert.equal(stack.upstream.requests[before].url, '/v1/responses', 'openai(id) speaks the Responses API');
      // response.failed is an error to the SDK, with the response's message
      const errorParts = parts.filter((p) => p.type === 'error').map((p) => String(p.error?.message ?? p.error));
      assert.deepEqual(errorParts, s.error ? [s.error.message] : [], 'error parts');
      assert.deepEqual(errors.map((e) => String(e?.message ?? e)), errorParts, 'onError calls');
      assert.equal(textOf(parts), s.text);
      const calls = callParts(parts);
      assert.deepEqual(clientCalls(calls), expectedCalls(s));
      assert.deepEqual(providerCalls(calls), expectedProviderCalls(s));
      assert.equal(finishOf(parts), finishReason(s));
      const usage = await result.totalUsage;
      assert.equal(usage.inputTokens, s.usage.input_tokens);
      assert.equal(usage.outputTokens, s.usage.output_tokens);
      // the raw chunks are the Responses events; the terminal one
      // (response.completed or .incomplete) has meta in its response
      const raw = rawValues(parts);
      assert.deepEqual(raw.map((e) => e.type), s.events().map((e) => e.type), 'every upstream event, the meta-only one withheld');
      const completed = raw.at(-1);
      assert.equal(completed.type, `response.${s.end}`);
      assertMeta(completed.response.meta, s, PRICES.responses);
    });
  }

  test('openai.responses(id) is the same model: meta from the raw response.completed', T, async () => {
    const { parts, errors } = await collect(openai.responses(RESP_TOOLS.model), { tools });
    assertNoError(parts, errors);
    assertMeta(rawValues(parts).at(-1).response.meta, RESP_TOOLS, PRICES.responses);
  });
});

// A failed JSON response is left out: the SDK refuses it whatever
// llm_meta does ("Invalid JSON response": it wants an error.type, which
// the Responses API's error object does not have).
describe('AI SDK 7 generateText via @ai-sdk/openai (Responses)', () => {
  for (const s of [RESP_TOOLS, RESP_META, RESP_INCOMPLETE]) {
    test(`${s.model}: text, tool calls, usage; meta from the response body`, T, async () => {
      const result = await generate(openai(s.model));
      assert.equal(result.text, s.text);
      assert.deepEqual(clientCalls(result.toolCalls), expectedCalls(s));
      assert.deepEqual(providerCalls(result.toolCalls), expectedProviderCalls(s));
      assert.equal(result.finishReason, finishReason(s));
      assert.equal(result.usage.inputTokens, s.usage.input_tokens);
      assert.equal(result.usage.outputTokens, s.usage.output_tokens);
      assertMeta(result.response.body?.meta, s, PRICES.responses);
    });
  }
});
