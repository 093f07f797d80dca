// AI SDK 7 with @ai-sdk/google (the Gemini API) through Caddy + llm_meta
// (SPEC 4.6, 9), baseURL at Caddy. The provider has no hook for extra
// fields: an app reads meta from the raw chunks (includeRawChunks), where
// the terminal event carries it, and from the response body
// (include.responseBody) of generateText.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

import {
  assertNoError, callParts, clientCalls, collect, finishOf, generate, rawValues, textOf, tools,
} from '../lib/aisdk.js';
import { useStack } from '../lib/harness.js';
import { assertMeta } from '../lib/meta.js';
import { PRICE_TABLE, PRICES } from '../lib/prices.js';
import { GEMINI_META, GEMINI_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };

let stack;
let google;

useStack((s) => {
  stack = s;
  google = createGoogleGenerativeAI({ baseURL: `${s.base}/v1beta`, apiKey: 'test-key' });
}, { prices: PRICE_TABLE });

const finishReason = (s) => (s.calls.length ? 'tool-calls' : 'stop');

describe('AI SDK 7 streamText via @ai-sdk/google', () => {
  for (const s of [GEMINI_TOOLS, GEMINI_META]) {
    test(`${s.model}: no error, text, function calls; meta from the raw terminal event`, T, async () => {
      const before = stack.upstream.requests.length;
      const { parts, errors, result } = await collect(google(s.model), { tools });
      assert.equal(stack.upstream.requests[before].url, `/v1beta/models/${s.model}:streamGenerateContent?alt=sse`);
      assertNoError(parts, errors);
      assert.equal(textOf(parts), s.text);
      assert.deepEqual(clientCalls(callParts(parts)), s.calls);
      assert.equal(finishOf(parts), finishReason(s));
      const usage = await result.totalUsage;
      assert.equal(usage.outputTokens, s.usage.candidatesTokenCount + (s.usage.thoughtsTokenCount ?? 0));
      const raw = rawValues(parts);
      assert.equal(raw.length, s.streamEvents().length, 'every upstream event, the meta-only one withheld');
      assert.equal(raw.filter((e) => 'meta' in e).length, 1, 'one event carries meta');
      assert.equal(raw.at(-1).candidates[0].finishReason, 'STOP');
      assertMeta(raw.at(-1).meta, s, PRICES.gemini);
    });
  }
});

describe('AI SDK 7 generateText via @ai-sdk/google', () => {
  for (const s of [GEMINI_TOOLS, GEMINI_META]) {
    test(`${s.model}: text, function calls; meta from the response body`, T, async () => {
      const result = await generate(google(s.model));
      assert.equal(result.text, s.text);
      assert.deepEqual(clientCalls(result.toolCalls), s.calls);
      assert.equal(result.finishReason, finishReason(s));
      assert.equal(result.usage.outputTokens, s.usage.candidatesTokenCount + (s.usage.thoughtsTokenCount ?? 0));
      assertMeta(result.response.body?.meta, s, PRICES.gemini);
    });
  }
});
