// What the AI SDK client suites share: declared tools, streamText collected
// into its parts, and the readings an app makes of them.

import assert from 'node:assert/strict';
import { generateText, streamText, tool } from 'ai';
import { z } from 'zod';

// Declared (not executed) tools, so the SDK accepts the streamed tool calls.
export const tools = {
  get_weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string() }) }),
  search_web: tool({ description: 'search', inputSchema: z.object({ q: z.string() }) }),
};

export const prompt = 'What is the weather in Paris?';

// Runs streamText over `model` and collects every part of its fullStream,
// raw chunks included (includeRawChunks), and every onError call.
export async function collect(model, extra = {}) {
  const errors = [];
  const result = streamText({
    model,
    prompt,
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

// Runs generateText over `model`, keeping the response body, where an app
// reads meta (AI SDK 7 keeps it only when asked).
export function generate(model, extra = {}) {
  return generateText({
    model,
    prompt,
    tools,
    include: { responseBody: true },
    maxRetries: 0,
    abortSignal: AbortSignal.timeout(15_000),
    ...extra,
  });
}

export function assertNoError(parts, errors) {
  const errorParts = parts.filter((p) => p.type === 'error');
  assert.deepEqual(errorParts.map((p) => String(p.error?.message ?? p.error)), [], 'no error part');
  assert.deepEqual(errors, [], 'no onError call');
}

export const textOf = (parts) => parts.filter((p) => p.type === 'text-delta').map((p) => p.text).join('');
export const finishOf = (parts) => parts.find((p) => p.type === 'finish')?.finishReason;
export const toolCallsOf = (parts) => parts.filter((p) => p.type === 'tool-call').map((c) => [c.toolName, c.input]);

// Tool calls (tool-call parts, or generateText's toolCalls) split as an
// app runs them: the ones for the app to run, [name, input], and the names
// of those the provider ran (a gateway's web search: providerExecuted).
export const clientCalls = (calls) => calls.filter((c) => !c.providerExecuted).map((c) => [c.toolName, c.input]);
export const providerCalls = (calls) => calls.filter((c) => c.providerExecuted).map((c) => c.toolName);
export const callParts = (parts) => parts.filter((p) => p.type === 'tool-call');

// Every raw chunk the provider passed on (includeRawChunks), as parsed JSON.
export const rawValues = (parts) => parts.filter((p) => p.type === 'raw').map((p) => p.rawValue);

// The chunks carrying `meta`, as an app reads them from the raw chunks the
// SDK passes on (includeRawChunks).
export const rawMetas = (parts) => parts.filter((p) => p.type === 'raw' && p.rawValue && 'meta' in p.rawValue).map((p) => p.rawValue);

// What every AI SDK provider must make of the sse-tools scenario (SSE_TOOLS
// of lib/upstream.js): no error, the text, finishReason tool-calls, both
// tool calls parsed, the usage (when the provider asks for it:
// stream_options.include_usage), and exactly one meta chunk (choices []).
export async function assertToolsStream(s, { parts, errors, result }, { asksUsage = true } = {}) {
  assertNoError(parts, errors);
  assert.equal(textOf(parts), s.text);
  assert.equal(await result.text, s.text);
  assert.equal(finishOf(parts), 'tool-calls');
  assert.deepEqual(toolCallsOf(parts), [
    ['get_weather', { city: 'Paris' }],
    ['search_web', { q: 'Paris events' }],
  ]);
  const usage = await result.totalUsage;
  assert.equal(usage.inputTokens, asksUsage ? s.usage.prompt_tokens : undefined);
  assert.equal(usage.outputTokens, asksUsage ? s.usage.completion_tokens : undefined);
  const metas = rawMetas(parts);
  assert.equal(metas.length, 1);
  assert.deepEqual(metas[0].choices, []);
}
