// AI SDK UI message streams written upstream by the real AI SDK 7
// (createUIMessageStream + pipeUIMessageStreamToResponse + streamText on
// MockLanguageModelV4): what a Next.js route of today's AI SDK sends.
//
// Each writer takes the node:http response and its scenario (the objects of
// ../lib/upstream.js).

import { createUIMessageStream, pipeUIMessageStreamToResponse, streamText, tool } from 'ai';
import { MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import { z } from 'zod';

const getWeather = tool({
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21, sky: 'sunny' }),
});

// The model's stream: text, then one get_weather call, then finish.
function modelChunks(s) {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't1' },
    ...s.textParts.map((t) => ({ type: 'text-delta', id: 't1', delta: t })),
    { type: 'text-end', id: 't1' },
    { type: 'tool-input-start', id: 'call-v7-1', toolName: 'get_weather' },
    { type: 'tool-input-delta', id: 'call-v7-1', delta: '{"city":"Paris"}' },
    { type: 'tool-input-end', id: 'call-v7-1' },
    { type: 'tool-call', toolCallId: 'call-v7-1', toolName: 'get_weather', input: '{"city":"Paris"}' },
    {
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: { inputTokens: { total: 12, noCache: 12 }, outputTokens: { total: 7, text: 7 } },
    },
  ];
}

function mockModel(s, chunkDelayInMs) {
  return new MockLanguageModelV4({
    modelId: 'mock-v4',
    doStream: async () => ({ stream: simulateReadableStream({ chunkDelayInMs, chunks: modelChunks(s) }) }),
  });
}

// The whole answer, and a `data-reasoning` part (Hustle-style reasoning
// object) after it.
export function sendUIMessageStream(res, s) {
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      const result = streamText({ model: mockModel(s, 2), prompt: 'What is the weather in Paris?', tools: { get_weather: getWeather } });
      writer.merge(result.toUIMessageStream({ generateMessageId: () => s.messageId }));
      writer.write({ type: 'data-reasoning', data: s.reasoning });
    },
  });
  pipeUIMessageStreamToResponse({ response: res, stream });
}

// The same answer, aborted on the server (a user pressed stop, a time limit
// ran out) once the first `abortAfter` text parts have been written: AI SDK 7
// then ends the stream with an `abort` part and [DONE], no `finish`.
export function sendAbortedUIMessageStream(res, s) {
  const ac = new AbortController();
  let written = 0;
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      const result = streamText({
        model: mockModel(s, 10),
        prompt: 'What is the weather in Paris?',
        tools: { get_weather: getWeather },
        abortSignal: ac.signal,
        onChunk: ({ chunk }) => {
          if (chunk.type === 'text-delta' && ++written === s.abortAfter) ac.abort();
        },
      });
      writer.merge(result.toUIMessageStream({ generateMessageId: () => s.messageId }));
    },
  });
  pipeUIMessageStreamToResponse({ response: res, stream });
}
