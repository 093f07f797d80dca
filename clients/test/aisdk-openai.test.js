// AI SDK 7 with @ai-sdk/openai (its chat-completions model, openai.chat())
// through Caddy + llm_meta. This provider has no hook for extra fields, so
// an app reads meta.tools_used from the raw chunks it passes on
// (includeRawChunks) when streaming, and from the response body otherwise
// (include.responseBody).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText } from 'ai';

import { assertNoError, assertToolsStream, collect, finishOf, prompt, rawMetas, textOf, tools } from '../lib/aisdk.js';
import { useStack } from '../lib/harness.js';
import { JSON_META, JSON_TOOLS, SSE_META, SSE_TEXT, SSE_TOOLS, V4_DATA, V7_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };

let openai;

useStack((s) => {
  openai = createOpenAI({ baseURL: `${s.base}/v1`, apiKey: 'test-key' });
});

// The last meta.tools_used among the raw chunks, as an app keeps it.
const toolsUsedOf = (parts) => rawMetas(parts).at(-1)?.meta?.tools_used;

describe('AI SDK 7 streamText via @ai-sdk/openai (chat)', () => {
  test('OpenAI SSE with tool calls and a final meta chunk: no error, text, tool calls, usage, tools_used', T, async () => {
    const run = await collect(openai.chat(SSE_TOOLS.model), { tools });
    await assertToolsStream(SSE_TOOLS, run);
    assert.deepEqual(toolsUsedOf(run.parts), SSE_TOOLS.toolsUsed);
  });

  for (const s of [SSE_META, V4_DATA, V7_UI]) {
    test(`${s.model}: text, finishReason, tools_used from the final meta chunk`, T, async () => {
      const { parts, errors } = await collect(openai.chat(s.model));
      assertNoError(parts, errors);
      assert.equal(textOf(parts), s.text);
      assert.equal(finishOf(parts), s.finishReason === 'tool_calls' ? 'tool-calls' : s.finishReason);
      assert.deepEqual(toolsUsedOf(parts), s.toolsUsed);
    });
  }

  test('OpenAI SSE without meta: text, finishReason stop, no meta chunk', T, async () => {
    const { parts, errors } = await collect(openai.chat(SSE_TEXT.model));
    assertNoError(parts, errors);
    assert.equal(textOf(parts), SSE_TEXT.text);
    assert.equal(finishOf(parts), 'stop');
    assert.deepEqual(rawMetas(parts), []);
  });
});

describe('AI SDK 7 generateText via @ai-sdk/openai (chat)', () => {
  for (const s of [JSON_TOOLS, JSON_META]) {
    test(`${s.model}: text, finishReason, tools_used from the response body`, T, async () => {
      const result = await generateText({
        model: openai.chat(s.model),
        prompt,
        tools,
        include: { responseBody: true }, // AI SDK 7 keeps the body only when asked
        maxRetries: 0,
        abortSignal: AbortSignal.timeout(15_000),
      });
      assert.equal(result.text, s.text);
      assert.equal(result.finishReason, s === JSON_TOOLS ? 'tool-calls' : 'stop');
      assert.deepEqual(result.response.body?.meta?.tools_used, s.toolsUsed);
    });
  }
});
