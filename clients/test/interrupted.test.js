// A stream the upstream cut short (SPEC 11.1) as each client library sees
// it: the upstream ends the stream of sse-tools, resp-tools, claude-tools
// or gemini-tools cleanly after half of its events (model `<scenario>-cut`,
// lib/cut.js), before the protocol's end.
//
// With `mark_interrupted on`, llm_meta ends such a stream with the
// protocol's own error event: every client here surfaces an error to the
// app instead of a normal finish, after the text so far. Without it, the
// stream passes as it came (plus meta where the protocol has room for it):
// what each client then does is asserted too, so that clients/README.md's
// table stays true when a client changes.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import OpenAI from 'openai';
import { InvalidResponseDataError, StreamProviderError } from 'ai';

import { collect, finishOf, textOf } from '../lib/aisdk.js';
import { CUT } from '../lib/cut.js';
import { openaiClient, useStack } from '../lib/harness.js';
import { CLAUDE_TOOLS, GEMINI_TOOLS, RESP_TOOLS, SSE_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const MESSAGE = 'The upstream ended the reply before it was complete.';
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
const cut = (s) => s.model + CUT;

// The text a client showed before the end: some of the scenario's text,
// from its start (all of it when the cut came in the tool calls after it).
function assertTextSoFar(text, s, what) {
  assert.ok(text.length > 0 && s.text.startsWith(text), `${what}: text so far ${JSON.stringify(text)}`);
}

// Reads a stream to its end or its error; the error is returned, not thrown.
async function drain(iterable, onItem = () => {}) {
  try {
    for await (const item of iterable) onItem(item);
  } catch (err) {
    return err;
  }
  return null;
}

const chatText = (chunks) => chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');

// The clients of one stack, built once it is up.
function clients(s) {
  const openai = createOpenAI({ baseURL: `${s.base}/v1`, apiKey: 'test-key' });
  return {
    openai: openaiClient(s),
    anthropic: new Anthropic({ baseURL: s.base, apiKey: 'test-key', maxRetries: 0, timeout: 15_000 }),
    genai: new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl: s.base, apiVersion: 'v1beta', timeout: 15_000 } }),
    aisdk: {
      'openai.chat()': openai.chat(cut(SSE_TOOLS)),
      'openai() (Responses)': openai(cut(RESP_TOOLS)),
      'openai-compatible': createOpenAICompatible({ baseURL: `${s.base}/v1`, name: 'llm', apiKey: 'test-key' })(cut(SSE_TOOLS)),
      anthropic: createAnthropic({ baseURL: `${s.base}/v1`, apiKey: 'test-key' })(cut(CLAUDE_TOOLS)),
      google: createGoogleGenerativeAI({ baseURL: `${s.base}/v1beta`, apiKey: 'test-key' })(cut(GEMINI_TOOLS)),
    },
  };
}

// The scenario each AI SDK provider above streams.
const aisdkScenario = {
  'openai.chat()': SSE_TOOLS, 'openai() (Responses)': RESP_TOOLS, 'openai-compatible': SSE_TOOLS,
  anthropic: CLAUDE_TOOLS, google: GEMINI_TOOLS,
};

describe('mark_interrupted on: every client surfaces an error', () => {
  let c;
  useStack((s) => { c = clients(s); }, { extra: '\t\tmark_interrupted on' });

  test('openai chat.completions.create({stream: true}): the meta chunk, then an APIError', T, async () => {
    const chunks = [];
    const stream = await c.openai.chat.completions.create({ model: cut(SSE_TOOLS), messages, stream: true });
    const err = await drain(stream, (ch) => chunks.push(ch));
    assert.ok(err instanceof OpenAI.APIError, `an APIError, got ${err}`);
    assert.equal(err.message, MESSAGE);
    assert.equal(err.status, undefined, 'an error in a 200 stream: no status');
    assert.deepEqual(err.error, { message: MESSAGE, type: 'upstream_interrupted', code: null });
    assertTextSoFar(chatText(chunks), SSE_TOOLS, 'chat');
    // The final meta event came before the error event: the app has both.
    assert.equal(chunks.at(-1).meta?.interrupted, true);
    assert.ok(chunks.every((ch) => ch.choices.every((x) => x.finish_reason === null)), 'no finish_reason');
  });

  test('openai chat.completions.stream(): finalChatCompletion() rejects with the APIError', T, async () => {
    const stream = c.openai.chat.completions.stream({ model: cut(SSE_TOOLS), messages });
    let text = '';
    stream.on('content', (delta) => { text += delta; });
    const err = await stream.finalChatCompletion().then(() => null, (e) => e);
    assert.ok(err instanceof OpenAI.APIError, `an APIError, got ${err}`);
    assert.equal(err.message, MESSAGE);
    assert.equal(err.error.type, 'upstream_interrupted');
    assertTextSoFar(text, SSE_TOOLS, 'chat .stream()');
  });

  test('openai responses.stream(): iterating throws an APIError with the event\'s code and meta', T, async () => {
    const stream = c.openai.responses.stream({ model: cut(RESP_TOOLS), input: messages });
    let text = '';
    const err = await drain(stream, (e) => { if (e.type === 'response.output_text.delta') text += e.delta; });
    assert.ok(err instanceof OpenAI.APIError, `an APIError, got ${err}`);
    assert.equal(err.message, MESSAGE);
    assert.equal(err.error.type, 'error');
    assert.equal(err.error.code, 'upstream_interrupted');
    assert.equal(err.error.meta.interrupted, true);
    assertTextSoFar(text, RESP_TOOLS, 'responses.stream');
    await assert.rejects(stream.finalResponse(), OpenAI.APIError);
  });

  test('@anthropic-ai/sdk messages.stream(): finalMessage() rejects with an APIError whose message is the event', T, async () => {
    const stream = c.anthropic.messages.stream({ model: cut(CLAUDE_TOOLS), max_tokens: 1024, messages });
    let text = '';
    stream.on('text', (t) => { text += t; });
    const err = await stream.finalMessage().then(() => null, (e) => e);
    assert.ok(err instanceof Anthropic.APIError, `an APIError, got ${err}`);
    assert.equal(err.status, undefined);
    // The SDK's message is the whole event's data, meta included.
    assert.deepEqual(JSON.parse(err.message), err.error);
    assert.deepEqual(err.error.error, { type: 'api_error', message: MESSAGE });
    assert.equal(err.error.meta.interrupted, true);
    assert.deepEqual(err.error.meta.tools_used, ['get_weather']);
    assertTextSoFar(text, CLAUDE_TOOLS, 'messages.stream');
  });

  test('@google/genai models.generateContentStream: iterating throws an ApiError, status 502', T, async () => {
    let text = '';
    const stream = await c.genai.models.generateContentStream({ model: cut(GEMINI_TOOLS), contents: 'What is the weather in Paris?' });
    const err = await drain(stream, (r) => { text += r.text ?? ''; });
    assert.ok(err?.constructor?.name === 'ApiError', `an ApiError, got ${err}`);
    assert.equal(err.status, 502);
    assert.ok(err.message.startsWith('got status: UNAVAILABLE. '), err.message);
    const body = JSON.parse(err.message.slice('got status: UNAVAILABLE. '.length));
    assert.deepEqual(body.error, { code: 502, message: MESSAGE, status: 'UNAVAILABLE' });
    assert.equal(body.meta.interrupted, true);
    assertTextSoFar(text, GEMINI_TOOLS, 'generateContentStream');
  });

  for (const name of Object.keys(aisdkScenario)) {
    test(`AI SDK 7 streamText, ${name}: an error part (StreamProviderError), finishReason "error"`, T, async () => {
      const s = aisdkScenario[name];
      const { parts, errors } = await collect(c.aisdk[name]);
      const errorParts = parts.filter((p) => p.type === 'error');
      assert.equal(errorParts.length, 1, JSON.stringify(parts.map((p) => p.type)));
      const err = errorParts[0].error;
      assert.ok(StreamProviderError.isInstance(err), `a StreamProviderError, got ${err?.name}`);
      assert.equal(err.message, MESSAGE);
      assert.deepEqual(errors, [err], 'onError got it');
      assert.equal(finishOf(parts), 'error');
      assertTextSoFar(textOf(parts), s, name);
    });
  }
});

describe('mark_interrupted off (the default): the stream ends as it came', () => {
  let c;
  useStack((s) => { c = clients(s); });

  test('openai chat.completions.create({stream: true}): a normal end; the final chunk\'s meta says interrupted', T, async () => {
    const chunks = [];
    const stream = await c.openai.chat.completions.create({ model: cut(SSE_TOOLS), messages, stream: true });
    assert.equal(await drain(stream, (ch) => chunks.push(ch)), null, 'no error');
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.equal(last.meta.interrupted, true);
    assert.deepEqual(last.meta.tools_used, ['get_weather']);
    assertTextSoFar(chatText(chunks), SSE_TOOLS, 'chat');
  });

  test('openai chat.completions.stream(): the helper itself rejects, "missing finish_reason"', T, async () => {
    const stream = c.openai.chat.completions.stream({ model: cut(SSE_TOOLS), messages });
    await assert.rejects(stream.finalChatCompletion(), (err) => err instanceof OpenAI.OpenAIError &&
      !(err instanceof OpenAI.APIError) && err.message === 'missing finish_reason for choice 0');
  });

  test('openai responses.stream(): no error; finalResponse() is the last snapshot, status in_progress', T, async () => {
    const stream = c.openai.responses.stream({ model: cut(RESP_TOOLS), input: messages });
    assert.equal(await drain(stream), null, 'no error');
    const final = await stream.finalResponse();
    assert.equal(final.status, 'in_progress');
    assert.equal(final.meta, undefined, 'no terminal event, so no meta');
  });

  test('@anthropic-ai/sdk messages.stream(): finalMessage() rejects with an AnthropicError, no APIError', T, async () => {
    const stream = c.anthropic.messages.stream({ model: cut(CLAUDE_TOOLS), max_tokens: 1024, messages });
    await assert.rejects(stream.finalMessage(), (err) => err instanceof Anthropic.AnthropicError &&
      !(err instanceof Anthropic.APIError) && err.message === 'stream ended without producing a Message with role=assistant');
  });

  test('@google/genai models.generateContentStream: a normal end with the text so far, no error', T, async () => {
    let text = '';
    const stream = await c.genai.models.generateContentStream({ model: cut(GEMINI_TOOLS), contents: 'What is the weather in Paris?' });
    assert.equal(await drain(stream, (r) => { text += r.text ?? ''; }), null, 'no error');
    assertTextSoFar(text, GEMINI_TOOLS, 'generateContentStream');
    assert.notEqual(text, GEMINI_TOOLS.text);
  });

  for (const name of Object.keys(aisdkScenario)) {
    const compatible = name === 'openai-compatible';
    const what = compatible ? 'an error part (InvalidResponseDataError), finishReason "error"' : 'no error, finishReason "interrupted"';
    test(`AI SDK 7 streamText, ${name}: ${what}`, T, async () => {
      const { parts, errors } = await collect(c.aisdk[name]);
      const errs = parts.filter((p) => p.type === 'error').map((p) => p.error);
      if (compatible) {
        assert.equal(errs.length, 1);
        assert.ok(InvalidResponseDataError.isInstance(errs[0]), `got ${errs[0]?.name}`);
        assert.equal(errs[0].message, 'Response stream ended without a finish reason.');
        assert.equal(finishOf(parts), 'error');
      } else {
        assert.deepEqual([errs, errors], [[], []], 'no error');
        assert.equal(finishOf(parts), 'interrupted');
      }
      assertTextSoFar(textOf(parts), aisdkScenario[name], name);
    });
  }
});
