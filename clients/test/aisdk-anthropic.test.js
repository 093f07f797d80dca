// AI SDK 7 with @ai-sdk/anthropic through Caddy + llm_meta (SPEC 4.5, 9).
// The provider has no hook for extra fields: an app reads meta from the raw
// chunks (includeRawChunks), where message_stop carries it, and from the
// response body (include.responseBody) of generateText.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';

import {
  assertNoError, callParts, clientCalls, collect, finishOf, generate, providerCalls, rawValues, textOf, tools,
} from '../lib/aisdk.js';
import { useStack } from '../lib/harness.js';
import { assertMeta } from '../lib/meta.js';
import { PRICE_TABLE, PRICES } from '../lib/prices.js';
import { CLAUDE_META, CLAUDE_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };

let stack;
let anthropic;

useStack((s) => {
  stack = s;
  anthropic = createAnthropic({ baseURL: `${s.base}/v1`, apiKey: 'test-key' });
}, { prices: PRICE_TABLE });

// The calls for the app to run (tool_use blocks); the SDK reports the
// gateway's web search (a server_tool_use block) as a call the provider
// executed.
const expectedCalls = (s) => s.blocks.filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input]);
const expectedProviderCalls = (s) => s.blocks.filter((b) => b.type === 'server_tool_use').map((b) => b.name);
const finishReason = (s) => (s.stopReason === 'tool_use' ? 'tool-calls' : 'stop');

// AI SDK's input tokens: the uncached ones plus the cache reads and
// writes, as meta.usage counts them.
const sdkInputTokens = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

describe('AI SDK 7 streamText via @ai-sdk/anthropic', () => {
  for (const s of [CLAUDE_TOOLS, CLAUDE_META]) {
    test(`${s.model}: no error, text, tool calls, usage; meta from the raw message_stop`, T, async () => {
      const before = stack.upstream.requests.length;
      const { parts, errors, result } = await collect(anthropic(s.model), { tools, maxOutputTokens: 1024 });
      assert.equal(stack.upstream.requests[before].url, '/v1/messages');
      assertNoError(parts, errors);
      assert.equal(textOf(parts), s.text);
      const calls = callParts(parts);
      assert.deepEqual(clientCalls(calls), expectedCalls(s));
      assert.deepEqual(providerCalls(calls), expectedProviderCalls(s));
      assert.equal(finishOf(parts), finishReason(s));
      const usage = await result.totalUsage;
      assert.equal(usage.inputTokens, sdkInputTokens(s.usage));
      assert.equal(usage.outputTokens, s.usage.output_tokens);
      const raw = rawValues(parts);
      assert.deepEqual(raw.map((e) => e.type), s.events().map((e) => e.type), 'every upstream event, the meta-only one withheld');
      const stop = raw.at(-1);
      assert.equal(stop.type, 'message_stop');
      assertMeta(stop.meta, s, PRICES.claude);
    });
  }
});

describe('AI SDK 7 generateText via @ai-sdk/anthropic', () => {
  for (const s of [CLAUDE_TOOLS, CLAUDE_META]) {
    test(`${s.model}: text, tool calls, usage; meta from the response body`, T, async () => {
      const result = await generate(anthropic(s.model), { maxOutputTokens: 1024 });
      assert.equal(result.text, s.text);
      assert.deepEqual(clientCalls(result.toolCalls), expectedCalls(s));
      assert.deepEqual(providerCalls(result.toolCalls), expectedProviderCalls(s));
      assert.equal(result.finishReason, finishReason(s));
      assert.equal(result.usage.inputTokens, sdkInputTokens(s.usage));
      assert.equal(result.usage.outputTokens, s.usage.output_tokens);
      assertMeta(result.response.body?.meta, s, PRICES.claude);
    });
  }
});
