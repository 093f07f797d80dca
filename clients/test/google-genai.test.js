// The official @google/genai client through Caddy + llm_meta (SPEC 4.6,
// 9): models.generateContent and models.generateContentStream with the
// client's base URL at Caddy (httpOptions.baseUrl, apiVersion v1beta). The
// client keeps only the fields it models, so its replies have no `meta`:
// an app reads it from the same bytes with its own fetch
// (httpOptions.fetch, lib/metatap.js): the JSON reply's top-level meta, or
// the terminal event's (the one with the finishReason).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GoogleGenAI } from '@google/genai';

import { useStack } from '../lib/harness.js';
import { assertMeta } from '../lib/meta.js';
import { metaTap } from '../lib/metatap.js';
import { PRICE_TABLE, PRICES } from '../lib/prices.js';
import { assertSpliced, postText } from '../lib/spliced.js';
import { GEMINI_META, GEMINI_TOOLS } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const contents = 'What is the weather in Paris?';

let stack;

useStack((s) => { stack = s; }, { prices: PRICE_TABLE });

// A client pointed at the stack's Caddy, the app's meta tap as its fetch.
function client() {
  const tap = metaTap();
  const ai = new GoogleGenAI({
    apiKey: 'test-key',
    httpOptions: { baseUrl: stack.base, apiVersion: 'v1beta', fetch: tap.fetch, timeout: 15_000 },
  });
  return { ai, tap };
}

const callsOf = (fcs) => (fcs ?? []).map((c) => [c.name, c.args]);

describe('@google/genai models.generateContent', () => {
  for (const s of [GEMINI_TOOLS, GEMINI_META]) {
    test(`${s.model}: text, function calls, usage; meta from the JSON reply`, T, async () => {
      const { ai, tap } = client();
      const before = stack.upstream.requests.length;
      const r = await ai.models.generateContent({ model: s.model, contents });
      assert.equal(stack.upstream.requests[before].url, `/v1beta/models/${s.model}:generateContent`);
      assert.equal(r.text, s.text);
      assert.deepEqual(callsOf(r.functionCalls), s.calls);
      assert.deepEqual(r.usageMetadata, s.usage);
      assert.equal(r.candidates[0].finishReason, 'STOP');
      const metas = await tap.metas();
      assert.equal(metas.length, 1, 'one meta, the reply\'s');
      assertMeta(metas[0], s, PRICES.gemini);
    });
  }
});

describe('@google/genai models.generateContentStream', () => {
  for (const s of [GEMINI_TOOLS, GEMINI_META]) {
    test(`${s.model}: every event parses, text, function calls, usage; meta from the terminal event`, T, async () => {
      const { ai, tap } = client();
      const before = stack.upstream.requests.length;
      const stream = await ai.models.generateContentStream({ model: s.model, contents });
      let text = '';
      const calls = [];
      const chunks = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        text += chunk.text ?? '';
        calls.push(...callsOf(chunk.functionCalls));
      }
      assert.equal(stack.upstream.requests[before].url, `/v1beta/models/${s.model}:streamGenerateContent?alt=sse`);
      assert.equal(chunks.length, s.streamEvents().length, 'one chunk for each upstream event but the meta-only one');
      assert.equal(text, s.text);
      assert.deepEqual(calls, s.calls);
      assert.deepEqual(chunks.at(-1).usageMetadata, s.usage);
      assert.equal(chunks.at(-1).candidates[0].finishReason, 'STOP');
      const metas = await tap.metas();
      assert.equal(metas.length, 1, 'one meta, the terminal event\'s');
      assertMeta(metas[0], s, PRICES.gemini);
    });
  }

  for (const s of [GEMINI_TOOLS, GEMINI_META]) {
    test(`${s.model}: the bytes are the upstream's, CRLF kept, meta added to the terminal event alone`, T, async () => {
      const path = `/v1beta/models/${s.model}:streamGenerateContent?alt=sse`;
      const { res, text } = await postText(stack.base, path, { contents: [{ role: 'user', parts: [{ text: contents }] }] });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      assert.ok(text.endsWith('\r\n\r\n') && !text.includes('}\n\n'), 'CRLF framing');
      const meta = assertSpliced(text, s.wire(), { terminal: (o) => o.candidates?.[0]?.finishReason !== undefined, metaHolder: (o) => o });
      assertMeta(meta, s, PRICES.gemini);
    });
  }
});
