// Vercel AI SDK v5 `streamText` with @ai-sdk/openai-compatible through
// Caddy + llm_meta (test 3): the final meta chunk must not become an error.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText, tool } from 'ai';
import { z } from 'zod';

import { startStack } from '../lib/harness.js';
import { JSON_TOOLS, SSE_TEXT, SSE_TOOLS, V4_DATA, V5_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };

let stack;
let llm;

before(async () => {
  stack = await startStack();
  llm = createOpenAICompatible({ baseURL: `${stack.base}/v1`, name: 'llm', apiKey: 'test-key' });
}, { timeout: 600_000 });

after(async () => {
  await stack?.stop();
});

// Declared (not executed) tools, so the SDK accepts the streamed tool calls.
const tools = {
  get_weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }) }),
  search_web: tool({ description: 'search', inputSchema: z.object({ q: z.string() }) }),
};

async function collect(model, extra = {}) {
  const errors = [];
  const result = streamText({
    model: llm(model),
    prompt: 'What is the weather in Paris?',
    maxRetries: 0,
    abortSignal: AbortSignal.timeout(15_000),
    includeRawChunks: true,
    onError: ({ error }) => errors.push(error),
    ...extra,
  });
  const parts = [];
  for await (const part of result.fullStream) parts.push(part);
  return { parts, errors, result };
}

function assertNoError(parts, errors) {
  const errorParts = parts.filter((p) => p.type === 'error');
  assert.deepEqual(errorParts.map((p) => String(p.error?.message ?? p.error)), [], 'no error part');
  assert.deepEqual(errors, [], 'no onError call');
}

const textOf = (parts) => parts.filter((p) => p.type === 'text-delta').map((p) => p.text).join('');
const finishOf = (parts) => parts.find((p) => p.type === 'finish')?.finishReason;
const rawMetas = (parts) => parts.filter((p) => p.type === 'raw' && p.rawValue && 'meta' in p.rawValue).map((p) => p.rawValue);

describe('AI SDK streamText via createOpenAICompatible (test 3)', () => {
  test('OpenAI SSE with tool calls and a final meta chunk: no error part, text and finishReason as sent', T, async () => {
    const { parts, errors, result } = await collect('sse-tools', { tools });
    assertNoError(parts, errors);
    assert.equal(textOf(parts), SSE_TOOLS.text);
    assert.equal(await result.text, SSE_TOOLS.text);
    assert.equal(finishOf(parts), 'tool-calls'); // upstream sent tool_calls
    const calls = parts.filter((p) => p.type === 'tool-call');
    assert.deepEqual(calls.map((c) => [c.toolName, c.input]), [
      ['get_weather', { city: 'Paris' }],
      ['search_web', { q: 'Paris events' }],
    ]);
    const usage = await result.totalUsage;
    assert.equal(usage.inputTokens, SSE_TOOLS.usage.prompt_tokens);
    assert.equal(usage.outputTokens, SSE_TOOLS.usage.completion_tokens);
    // the meta chunk reached the SDK (as a raw chunk) and was accepted
    const metas = rawMetas(parts);
    assert.equal(metas.length, 1);
    assert.deepEqual(metas[0].choices, []);
    assert.deepEqual(metas[0].meta.tools_used, SSE_TOOLS.toolsUsed);
  });

  test('OpenAI SSE without meta: text and finishReason stop', T, async () => {
    const { parts, errors } = await collect('sse-text');
    assertNoError(parts, errors);
    assert.equal(textOf(parts), SSE_TEXT.text);
    assert.equal(finishOf(parts), 'stop');
    assert.deepEqual(rawMetas(parts), []);
  });

  for (const s of [V4_DATA, V5_UI]) {
    test(`converted ${s.model} stream: no error part, text, finishReason, meta chunk`, T, async () => {
      const { parts, errors } = await collect(s.model);
      assertNoError(parts, errors);
      assert.equal(textOf(parts), s.text);
      assert.equal(finishOf(parts), 'tool-calls');
      const metas = rawMetas(parts);
      assert.equal(metas.length, 1);
      assert.deepEqual(metas[0].meta.tools_used, s.toolsUsed);
    });
  }

  test('generateText (non-stream) reads the rewritten JSON reply', T, async () => {
    const result = await generateText({
      model: llm('json-tools'),
      prompt: 'What is the weather in Paris?',
      tools,
      maxRetries: 0,
      abortSignal: AbortSignal.timeout(15_000),
    });
    assert.equal(result.text, JSON_TOOLS.text);
    assert.deepEqual(result.toolCalls.map((c) => c.toolName), ['get_weather', 'search_web']);
    assert.equal(result.finishReason, 'tool-calls');
    assert.deepEqual(result.response.body.meta.tools_used, JSON_TOOLS.toolsUsed);
  });
});
