// The official Anthropic SDK (@anthropic-ai/sdk) through Caddy + llm_meta
// (SPEC 4.5, 9). Its types do not know `meta`; an app reads it as the extra
// field it is: `message.meta` of messages.create (the SDK keeps the whole
// JSON; .withResponse() gives the same object and the HTTP response), and
// the `meta` of the message_stop event of a stream (messages.stream's
// events, or messages.create({stream: true})'s raw events), beside the
// final message the SDK accumulates.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';

import { useStack } from '../lib/harness.js';
import { assertMeta } from '../lib/meta.js';
import { PRICE_TABLE, PRICES } from '../lib/prices.js';
import { assertSpliced, postText } from '../lib/spliced.js';
import { CLAUDE_META, CLAUDE_TOOLS, COUNT_TOKENS } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
const params = (s) => ({ model: s.model, max_tokens: 1024, messages });

let stack;
let client;

useStack((s) => {
  stack = s;
  client = new Anthropic({ baseURL: s.base, apiKey: 'test-key', maxRetries: 0, timeout: 15_000 });
}, { prices: PRICE_TABLE });

const textOf = (msg) => msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
const toolUses = (msg) => msg.content.filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input]);
const expectedToolUses = (s) => s.blocks.filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input]);

describe('Anthropic SDK, messages.create (JSON)', () => {
  for (const s of [CLAUDE_TOOLS, CLAUDE_META]) {
    test(`${s.model}: content, tool_use blocks, usage with cache fields, and message.meta`, T, async () => {
      const { data: message, response } = await client.messages.create(params(s)).withResponse();
      assert.equal(response.status, 200);
      assert.equal(textOf(message), s.text);
      assert.deepEqual(toolUses(message), expectedToolUses(s));
      assert.equal(message.stop_reason, s.stopReason);
      assert.deepEqual(message.usage, s.usage, 'the upstream\'s usage as it came');
      assertMeta(message.meta, s, PRICES.claude);
      // the rest is the upstream's message as it came
      const { meta, ...rest } = message;
      assert.deepEqual(rest, s.message());
    });
  }

  test('the upstream received the request as the SDK sent it', T, async () => {
    const before = stack.upstream.requests.length;
    await client.messages.create(params(CLAUDE_TOOLS));
    const got = stack.upstream.requests[before];
    assert.equal(got.url, '/v1/messages');
    assert.deepEqual(got.body, params(CLAUDE_TOOLS));
    assert.ok(got.headers['anthropic-version'], 'the SDK\'s anthropic-version header reached the upstream');
  });

  test('messages.countTokens: the count as the upstream sent it, no meta', T, async () => {
    const { data, response } = await client.messages.countTokens({ model: CLAUDE_TOOLS.model, messages }).withResponse();
    assert.equal(response.status, 200);
    assert.deepEqual(data, COUNT_TOKENS);
    assert.equal(stack.upstream.requests.at(-1).url, '/v1/messages/count_tokens');
  });
});

describe('Anthropic SDK, streams', () => {
  for (const s of [CLAUDE_TOOLS, CLAUDE_META]) {
    test(`${s.model}, messages.stream: finalMessage() whole, meta from the message_stop event`, T, async () => {
      const stream = client.messages.stream(params(s));
      const events = [];
      let text = '';
      stream.on('streamEvent', (e) => events.push(e));
      stream.on('text', (delta) => { text += delta; });
      const final = await stream.finalMessage();
      assert.equal(text, s.text);
      assert.equal(textOf(final), s.text);
      assert.deepEqual(toolUses(final), expectedToolUses(s));
      assert.equal(final.stop_reason, s.stopReason);
      // the SDK's usage: message_start's cache fields, message_delta's
      // output tokens (it keeps no cost)
      const { cost: _, ...usage } = s.usage;
      assert.deepEqual(final.usage, usage);
      const stop = events.at(-1);
      assert.equal(stop.type, 'message_stop');
      assertMeta(stop.meta, s, PRICES.claude);
      assert.deepEqual(events.slice(0, -1).filter((e) => 'meta' in e), [], 'only message_stop carries meta');
    });

    test(`${s.model}, messages.create({stream: true}): every event parses, the upstream's less the meta-only one`, T, async () => {
      const stream = await client.messages.create({ ...params(s), stream: true });
      const events = [];
      for await (const e of stream) events.push(e);
      // the SDK skips ping; the gateway's meta-only event never reaches it
      assert.deepEqual(events.map((e) => e.type), s.events().map((e) => e.type).filter((t) => t !== 'ping'));
      assertMeta(events.at(-1).meta, s, PRICES.claude);
    });

    test(`${s.model}, raw bytes: every event byte-identical but message_stop, which gains meta`, T, async () => {
      const body = { ...params(s), stream: true };
      const headers = { 'anthropic-version': '2023-06-01' };
      const direct = await postText(stack.upstream.url, '/v1/messages', body, headers);
      const { res, text } = await postText(stack.base, '/v1/messages', body, headers);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      const meta = assertSpliced(text, direct.text, { terminal: (e) => e.type === 'message_stop', metaHolder: (e) => e });
      assertMeta(meta, s, PRICES.claude);
    });
  }
});
