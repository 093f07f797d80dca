// The official `openai` npm client (7.x), Responses API, through Caddy +
// llm_meta (SPEC 4.4, 9): an app reads meta from the response object's
// top-level `meta` (responses.create, JSON), from the response of the
// terminal event (response.completed, or response.incomplete) of a raw
// stream, and from the final response of the stream helper
// (responses.stream). Every event must parse and every event but the
// terminal one is the upstream's, byte for byte.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { openaiClient, useStack } from '../lib/harness.js';
import { assertMeta } from '../lib/meta.js';
import { PRICE_TABLE, PRICES } from '../lib/prices.js';
import { assertSpliced, postText } from '../lib/spliced.js';
import { RESP_FAILED, RESP_INCOMPLETE, RESP_META, RESP_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const input = 'What is the weather in Paris?';

let stack;
let client;

useStack((s) => {
  stack = s;
  client = openaiClient(s);
}, { prices: PRICE_TABLE });

const functionCalls = (output) => output.filter((i) => i.type === 'function_call').map((i) => [i.name, i.arguments]);
const expectedCalls = (s) => (s.calls ?? []).map((c) => [c.name, c.arguments]);

// The events an app sees for a scenario: the upstream's, less the
// gateway's meta-only event.
const eventTypes = (s) => s.events().map((e) => e.type);
const terminalType = (s) => `response.${s.end}`;
const SCENARIOS = [RESP_TOOLS, RESP_META, RESP_INCOMPLETE, RESP_FAILED];

describe('openai client, Responses API JSON (responses.create)', () => {
  for (const s of SCENARIOS) {
    test(`${s.model}: output_text, function calls, and meta (tools_used, usage, cost_usd) on the response`, T, async () => {
      const { data, response } = await client.responses.create({ model: s.model, input }).withResponse();
      assert.equal(response.status, 200);
      assert.equal(data.output_text, s.text);
      assert.deepEqual(functionCalls(data.output), expectedCalls(s));
      assertMeta(data.meta, s, PRICES.responses);
      // the rest is the upstream's response as it came (output_text is the
      // client's own convenience)
      const { meta, output_text: _, ...rest } = data;
      const { meta: _upstreamMeta, ...upstream } = s.body();
      assert.deepEqual(rest, upstream);
    });
  }

  test('the upstream received the request as the client sent it', T, async () => {
    const before = stack.upstream.requests.length;
    await client.responses.create({ model: RESP_TOOLS.model, input, temperature: 0.2 });
    const got = stack.upstream.requests[before];
    assert.equal(got.url, '/v1/responses');
    assert.deepEqual(got.body, { model: RESP_TOOLS.model, input, temperature: 0.2 });
  });
});

describe('openai client, Responses API streams', () => {
  for (const s of SCENARIOS) {
    test(`${s.model}, responses.create({stream: true}): every event parses; meta in the terminal event's response`, T, async () => {
      const stream = await client.responses.create({ model: s.model, input, stream: true });
      const events = [];
      for await (const e of stream) events.push(e);
      assert.deepEqual(events.map((e) => e.type), eventTypes(s), 'the upstream\'s events, the meta-only one withheld');
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i), 'sequence numbers untouched');
      const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
      assert.equal(text, s.text);
      const completed = events.at(-1);
      assert.equal(completed.type, terminalType(s));
      assert.equal(completed.response.status, s.end);
      assertMeta(completed.response.meta, s, PRICES.responses);
      assert.deepEqual(functionCalls(completed.response.output), expectedCalls(s));
      // only the terminal event carries meta
      assert.deepEqual(events.slice(0, -1).filter((e) => JSON.stringify(e).includes('"meta"')), []);
    });

    test(`${s.model}, the stream helper (responses.stream): final response with meta, the terminal event's meta`, T, async () => {
      const stream = client.responses.stream({ model: s.model, input });
      let completed;
      let deltas = '';
      stream.on('response.output_text.delta', (e) => { deltas += e.delta; });
      stream.on(terminalType(s), (e) => { completed = e; });
      const final = await stream.finalResponse();
      assert.equal(deltas, s.text);
      assert.equal(final.output_text, s.text);
      assert.equal(final.status, s.end);
      assert.deepEqual(functionCalls(final.output), expectedCalls(s));
      assertMeta(completed.response.meta, s, PRICES.responses);
      assertMeta(final.meta, s, PRICES.responses); // the helper's final response is the completed event's
    });

    test(`${s.model}, raw bytes: every event byte-identical but ${terminalType(s)}, whose response gains meta`, T, async () => {
      const body = { model: s.model, input, stream: true };
      const direct = await postText(stack.upstream.url, '/v1/responses', body);
      const { res, text } = await postText(stack.base, '/v1/responses', body);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      const meta = assertSpliced(text, direct.text, {
        terminal: (e) => e.type === terminalType(s),
        metaHolder: (e) => e.response,
      });
      assertMeta(meta, s, PRICES.responses);
    });
  }
});
