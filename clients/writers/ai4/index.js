// Agent Hustle's upstream stream, written by the real AI SDK 4 (ai@4.3.19):
// the data stream protocol v1 that Hustle still sends. This package pins
// ai 4 and zod 3 for itself, beside the current majors the clients use.
//
// Each writer takes the node:http response and the scenario it writes
// (the objects of ../../lib/upstream.js, so expectations and bytes share
// one source).

import { z } from 'zod';
import {
  formatDataStreamPart,
  pipeDataStreamToResponse,
  streamText,
  tool,
} from 'ai';
import { MockLanguageModelV1, simulateReadableStream } from 'ai/test';

// A data stream like Hustle's: `2:` data parts (reasoning, path_info), text,
// a streamed tool call and its result, then the finish parts.
export function sendDataStream(res, s) {
  pipeDataStreamToResponse(res, {
    execute: async (writer) => {
      for (const d of s.dataParts) writer.writeData(d);
      const result = streamText({
        model: new MockLanguageModelV1({
          modelId: 'mock-v1',
          doStream: async () => ({
            stream: simulateReadableStream({
              chunkDelayInMs: 2,
              chunks: [
                ...s.textParts.map((t) => ({ type: 'text-delta', textDelta: t })),
                { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'call-v4-1', toolName: 'get_weather', argsTextDelta: '{"city":' },
                { type: 'tool-call-delta', toolCallType: 'function', toolCallId: 'call-v4-1', toolName: 'get_weather', argsTextDelta: '"Paris"}' },
                { type: 'tool-call', toolCallType: 'function', toolCallId: 'call-v4-1', toolName: 'get_weather', args: '{"city":"Paris"}' },
                { type: 'finish', finishReason: 'tool-calls', usage: { promptTokens: s.usage.prompt_tokens, completionTokens: s.usage.completion_tokens } },
              ],
            }),
            rawCall: { rawPrompt: null, rawSettings: {} },
          }),
        }),
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'Current weather for a city',
            parameters: z.object({ city: z.string() }),
            execute: async ({ city }) => ({ city, tempC: 21, sky: 'sunny' }),
          }),
        },
        toolCallStreaming: true,
        experimental_generateMessageId: () => s.messageId,
      });
      result.mergeIntoDataStream(writer);
    },
  });
}

// A data stream that fails after some text: the writer turns the thrown
// error into a `3:` part.
export function sendErrorStream(res, s) {
  pipeDataStreamToResponse(res, {
    execute: async (writer) => {
      writer.write(formatDataStreamPart('start_step', { messageId: s.messageId }));
      writer.write(formatDataStreamPart('text', s.text));
      await new Promise((r) => setTimeout(r, 5));
      throw new Error(s.error);
    },
    onError: (err) => err.message,
  });
}
