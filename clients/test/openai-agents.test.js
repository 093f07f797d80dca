// The OpenAI Agents SDK (@openai/agents) through Caddy + llm_meta, on its
// chat-completions model (OpenAIChatCompletionsModel). An app reads
// meta.tools_used from each model response's providerData (the raw
// completion) when not streaming, and from the raw model events (the
// chunks) when streaming. With function tools, the agent runs the calls
// itself and asks again; the first turn's meta names the tools.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

import { openaiClient, useStack } from '../lib/harness.js';
import { AFTER_TOOLS, JSON_META, JSON_TOOLS, SSE_META, SSE_TOOLS, V4_DATA, V7_UI } from '../lib/upstream.js';

const T = { timeout: 20_000 };
const question = 'What is the weather in Paris?';

setTracingDisabled(true); // no trace export to api.openai.com

let client;

useStack((s) => {
  client = openaiClient(s);
});

// The agent's own tools; `ran` records each call.
function agentFor(model) {
  const ran = [];
  const tools = [
    tool({ name: 'get_weather', description: 'weather', parameters: z.object({ city: z.string() }), execute: async ({ city }) => { ran.push(['get_weather', city]); return `${city}: sunny, 21 °C`; } }),
    tool({ name: 'search_web', description: 'search', parameters: z.object({ q: z.string() }), execute: async ({ q }) => { ran.push(['search_web', q]); return `results for ${q}`; } }),
  ];
  const agent = new Agent({ name: 'weather', instructions: 'Answer weather questions.', model: new OpenAIChatCompletionsModel(client, model), tools });
  return { agent, ran };
}

// meta.tools_used of each model response, in turn order.
const toolsUsedByTurn = (result) => result.rawResponses.map((r) => r.providerData?.meta?.tools_used);

describe('Agents SDK run (JSON)', () => {
  test('the gateway\'s own tools: the answer, and meta.tools_used from providerData', T, async () => {
    const { agent, ran } = agentFor(JSON_META.model);
    const result = await run(agent, question);
    assert.equal(result.finalOutput, JSON_META.text);
    assert.deepEqual(toolsUsedByTurn(result), [JSON_META.toolsUsed]);
    assert.deepEqual(ran, []);
  });

  test('function tools: the agent runs both calls, asks again, and the first turn\'s meta names them', T, async () => {
    const { agent, ran } = agentFor(JSON_TOOLS.model);
    const result = await run(agent, question);
    assert.deepEqual(ran, [['get_weather', 'Paris'], ['search_web', 'Paris events']]);
    assert.equal(result.finalOutput, AFTER_TOOLS.text);
    assert.deepEqual(toolsUsedByTurn(result), [JSON_TOOLS.toolsUsed, undefined]);
  });
});

describe('Agents SDK run (stream)', () => {
  // Streams the run; returns the result and every meta in the raw chunks.
  async function streamed(model) {
    const { agent, ran } = agentFor(model);
    const result = await run(agent, question, { stream: true });
    const metas = [];
    for await (const ev of result) {
      if (ev.type === 'raw_model_stream_event' && ev.data.type === 'model' && ev.data.event?.meta) metas.push(ev.data.event.meta);
    }
    await result.completed;
    return { result, metas, ran };
  }

  for (const s of [SSE_META, V4_DATA, V7_UI]) {
    test(`${s.model}: the answer, and tools_used from the final meta chunk`, T, async () => {
      const { result, metas, ran } = await streamed(s.model);
      assert.equal(result.error ?? null, null);
      assert.equal(result.finalOutput, s.text);
      assert.equal(metas.length, 1);
      assert.deepEqual(metas[0].tools_used, s.toolsUsed);
      assert.deepEqual(ran, []);
    });
  }

  test('function tools over SSE: the agent runs both calls; the first turn\'s meta chunk names them', T, async () => {
    const { result, metas, ran } = await streamed(SSE_TOOLS.model);
    assert.deepEqual(ran, [['get_weather', 'Paris'], ['search_web', 'Paris events']]);
    assert.equal(result.finalOutput, AFTER_TOOLS.text);
    // The second turn asks for SSE_TOOLS.model and the upstream answers as
    // AFTER_TOOLS.model: its meta chunk says so (SPEC 11.2), and names no tool.
    assert.equal(metas.length, 2);
    assert.deepEqual(metas[0].tools_used, SSE_TOOLS.toolsUsed);
    assert.equal(metas[1].model_served, AFTER_TOOLS.model);
    assert.equal(metas[1].tools_used, undefined);
  });
});
