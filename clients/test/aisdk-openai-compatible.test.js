// AI SDK 7 with @ai-sdk/openai-compatible through Caddy + llm_meta: the
// final meta chunk is no error, and an app reads meta.tools_used the way
// this provider offers for extra fields: a metadataExtractor, whose result
// arrives as providerMetadata (stream and JSON alike).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';

import { assertNoError, assertToolsStream, collect, finishOf, prompt, rawMetas, textOf, tools } from '../lib/aisdk.js';
import { useStack } from '../lib/harness.js';
import { JSON_META, JSON_TOOLS, SSE_META, SSE_TEXT, SSE_TOOLS, V4_DATA, V7_ABORT, V7_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };

// An app's metadataExtractor: the last meta.tools_used and meta.usage
// seen, under providerMetadata.llm_meta.
const fromMeta = (meta) => ({ llm_meta: { toolsUsed: meta.tools_used ?? [], ...(meta.usage ? { usage: meta.usage } : {}) } });
const metadataExtractor = {
  extractMetadata: async ({ parsedBody }) => (parsedBody?.meta ? fromMeta(parsedBody.meta) : undefined),
  createStreamExtractor: () => {
    let meta;
    return {
      processChunk(chunk) {
        if (chunk?.meta && typeof chunk.meta === 'object') meta = chunk.meta;
      },
      buildMetadata: () => (meta ? fromMeta(meta) : undefined),
    };
  },
};

let llm; // as the provider comes: it does not ask streams for usage
let llmWithUsage; // includeUsage: it asks (stream_options.include_usage)

useStack((s) => {
  const settings = { baseURL: `${s.base}/v1`, name: 'llm', apiKey: 'test-key', metadataExtractor };
  llm = createOpenAICompatible(settings);
  llmWithUsage = createOpenAICompatible({ ...settings, includeUsage: true });
});

describe('AI SDK 7 streamText via @ai-sdk/openai-compatible', () => {
  // llm_meta withholds the usage chunk this provider did not ask for, as
  // OpenAI would not send it: the SDK has no usage, meta has it.
  test('OpenAI SSE with tool calls and a final meta chunk: no error, text, tool calls; tools_used and usage in providerMetadata', T, async () => {
    const run = await collect(llm(SSE_TOOLS.model), { tools });
    await assertToolsStream(SSE_TOOLS, run, { asksUsage: false });
    assert.deepEqual((await run.result.providerMetadata)?.llm_meta, { toolsUsed: SSE_TOOLS.toolsUsed, usage: SSE_TOOLS.metaUsage });
  });

  test('includeUsage: the SDK\'s usage from the usage chunk, and meta.usage in providerMetadata', T, async () => {
    const run = await collect(llmWithUsage(SSE_TOOLS.model), { tools });
    await assertToolsStream(SSE_TOOLS, run, { asksUsage: true });
    assert.deepEqual((await run.result.providerMetadata)?.llm_meta, { toolsUsed: SSE_TOOLS.toolsUsed, usage: SSE_TOOLS.metaUsage });
  });

  test('the gateway\'s own tools (a meta-only event upstream) reach providerMetadata', T, async () => {
    const { parts, errors, result } = await collect(llm(SSE_META.model));
    assertNoError(parts, errors);
    assert.equal(textOf(parts), SSE_META.text);
    assert.equal(finishOf(parts), 'stop');
    assert.deepEqual((await result.providerMetadata)?.llm_meta?.toolsUsed, SSE_META.toolsUsed);
  });

  test('OpenAI SSE without meta: text, finishReason stop, no meta', T, async () => {
    const { parts, errors, result } = await collect(llm(SSE_TEXT.model));
    assertNoError(parts, errors);
    assert.equal(textOf(parts), SSE_TEXT.text);
    assert.equal(finishOf(parts), 'stop');
    assert.deepEqual(rawMetas(parts), []);
    assert.equal((await result.providerMetadata)?.llm_meta, undefined);
  });

  for (const s of [V4_DATA, V7_UI]) {
    test(`converted ${s.model} stream: no error, text, finishReason, tools_used`, T, async () => {
      const { parts, errors, result } = await collect(llm(s.model));
      assertNoError(parts, errors);
      assert.equal(textOf(parts), s.text);
      assert.equal(finishOf(parts), 'tool-calls');
      assert.deepEqual((await result.providerMetadata)?.llm_meta?.toolsUsed, s.toolsUsed);
    });
  }

  // ai@7 upstream ends an aborted answer with an `abort` part and [DONE]:
  // the app must get the text so far and an ordinary stop.
  test('converted v7-abort stream (aborted on the server): the text so far, finishReason stop, no error', T, async () => {
    const { parts, errors } = await collect(llm(V7_ABORT.model));
    assertNoError(parts, errors);
    assert.equal(textOf(parts), V7_ABORT.text);
    assert.equal(finishOf(parts), 'stop');
  });
});

describe('AI SDK 7 generateText via @ai-sdk/openai-compatible', () => {
  test('reads the rewritten JSON reply: text, tool calls, tools_used in providerMetadata', T, async () => {
    const result = await generateText({ model: llm(JSON_TOOLS.model), prompt, tools, maxRetries: 0, abortSignal: AbortSignal.timeout(15_000) });
    assert.equal(result.text, JSON_TOOLS.text);
    assert.deepEqual(result.toolCalls.map((c) => c.toolName), ['get_weather', 'search_web']);
    assert.equal(result.finishReason, 'tool-calls');
    assert.deepEqual(result.providerMetadata?.llm_meta?.toolsUsed, JSON_TOOLS.toolsUsed);
  });

  test('the gateway\'s own tools, from its top-level meta', T, async () => {
    const result = await generateText({ model: llm(JSON_META.model), prompt, maxRetries: 0, abortSignal: AbortSignal.timeout(15_000) });
    assert.equal(result.text, JSON_META.text);
    assert.equal(result.finishReason, 'stop');
    assert.deepEqual(result.providerMetadata?.llm_meta?.toolsUsed, JSON_META.toolsUsed);
  });
});
