// The scripted upstream's chat-completion replies (POST
// /v1/chat/completions; lib/upstream.js serves them), one per request's
// `model`, exported so that tests compare with what they receive:
//
//   json-tools  OpenAI non-stream JSON with content, tool_calls and meta
//   json-meta   OpenAI non-stream JSON whose tools the gateway ran itself:
//               named in its top-level meta only, no tool_calls
//   json-cost   OpenRouter's JSON: usage with cached and reasoning tokens
//               and the request's `cost`
//   json-priced the same usage without a cost (the usage suites' price
//               table prices it, lib/prices.js)
//   litellm-cost  LiteLLM's proxy: the cost in the x-litellm-response-cost
//               header, JSON or SSE as asked (its usage chunk only when
//               include_usage asks)
//   sse-tools   OpenAI SSE: content deltas, two streamed tool calls, finish,
//               [DONE] (written in odd-sized pieces); as OpenAI does, the
//               usage chunk (`choices: []`) and `"usage": null` on every
//               other chunk only when stream_options.include_usage asks
//   sse-text    OpenAI SSE: content deltas only, finish "stop", [DONE]
//   sse-meta    OpenAI SSE whose tools the gateway ran itself: content
//               deltas, finish, a meta-only event, [DONE]
//   structured  a structured-mode answer (JSON with `reply`), JSON or SSE
//   v4-data     Agent Hustle's data stream, written by the real ai@4
//               (writers/ai4: pipeDataStreamToResponse + streamText)
//   v4-error    ai@4 data stream: start step, text, then a `3:` error part
//   v7-ui       AI SDK UI message stream written by the real ai@7
//               (writers/ai7.js: createUIMessageStream + streamText), with
//               a tool call and a data-reasoning part
//   v7-abort    the same, aborted on the server after some text: ai@7 ends
//               it with an `abort` part and [DONE]
//   after-tools any request whose last message is a tool result (an agent
//               ran json-tools' or sse-tools' calls): a text answer, JSON
//               or SSE as asked
//
// Only sse-tools and litellm-cost report usage in a stream; the other
// streams ignore stream_options, as gateways that report no usage do.
//
// A scenario's `metaUsage` and `costUsd` are the meta.usage and
// meta.cost_usd llm_meta must give for it (SPEC 9).

import { dataEvent } from './wire.js';

export const CREATED = 1735689600;

export const JSON_TOOLS = {
  model: 'json-tools',
  text: 'Paris is sunny ☀️, 21 °C. I also searched the web for “Paris events”.',
  // upstream meta: choices[0].meta and top-level meta (SPEC 4.2 merge)
  toolsUsed: ['memory_lookup', 'get_weather', 'search_web'],
  metaUsage: { input_tokens: 31, output_tokens: 42, total_tokens: 73 },
  body() {
    return {
      id: 'chatcmpl-json-1',
      object: 'chat.completion',
      created: CREATED,
      model: this.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.text,
            refusal: null,
            tool_calls: [
              { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_s1', type: 'function', function: { name: 'search_web', arguments: '{"q":"Paris events"}' } },
            ],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
          meta: { tools_used: ['memory_lookup'] },
        },
      ],
      usage: { prompt_tokens: 31, completion_tokens: 42, total_tokens: 73 },
      meta: { tools_used: ['memory_lookup'], gateway: 'test-upstream' },
    };
  },
};

// The gateway ran its tools itself and reports them in `meta` only, with no
// tool_calls for the client to run: what most apps meet, and what an agent
// framework reads without entering a tool loop.
export const JSON_META = {
  model: 'json-meta',
  text: 'Paris is sunny, 21 °C; the Louvre is open until 18:00.',
  toolsUsed: ['web_search', 'memory_lookup'],
  finishReason: 'stop',
  metaUsage: { input_tokens: 20, output_tokens: 15, total_tokens: 35 },
  body() {
    return {
      id: 'chatcmpl-json-meta',
      object: 'chat.completion',
      created: CREATED,
      model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 15, total_tokens: 35 },
      meta: { tools_used: this.toolsUsed },
    };
  },
};

// OpenRouter's reply: usage with its details and the request's cost in
// US dollars, which llm_meta reports as meta.cost_usd.
export const JSON_COST = {
  model: 'json-cost',
  text: 'Paris: sunny, 21 °C.',
  toolsUsed: [],
  finishReason: 'stop',
  usage: {
    prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500,
    prompt_tokens_details: { cached_tokens: 1000, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 120, audio_tokens: 0 },
    cost: 0.00123, is_byok: false,
  },
  metaUsage: { input_tokens: 1200, output_tokens: 300, total_tokens: 1500, cached_input_tokens: 1000, reasoning_tokens: 120 },
  costUsd: 0.00123,
  body() {
    return {
      id: `chatcmpl-${this.model}`, object: 'chat.completion', created: CREATED, model: this.model, provider: 'OpenAI',
      choices: [{ index: 0, message: { role: 'assistant', content: this.text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: this.usage,
    };
  },
};

// The same usage with no cost: the price table's row for it gives one.
export const JSON_PRICED = {
  ...JSON_COST,
  model: 'json-priced',
  usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, prompt_tokens_details: { cached_tokens: 1000 } },
  metaUsage: { input_tokens: 1200, output_tokens: 300, total_tokens: 1500, cached_input_tokens: 1000 },
  costUsd: undefined,
};

// LiteLLM's proxy reports the cost in a response header, JSON or stream;
// its stream sends usage only when include_usage asks, as OpenAI does.
export const LITELLM = {
  id: 'chatcmpl-litellm',
  model: 'litellm-cost',
  textParts: ['Paris: ', 'sunny, ', '21 °C.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: [],
  headers: { 'x-litellm-response-cost': '0.000321', 'x-litellm-model-id': 'test-deployment' },
  costUsd: 0.000321,
  usage: { prompt_tokens: 300, completion_tokens: 10, total_tokens: 310 },
  metaUsage: { input_tokens: 300, output_tokens: 10, total_tokens: 310 },
  body() {
    return {
      id: this.id, object: 'chat.completion', created: CREATED, model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.text }, finish_reason: 'stop' }],
      usage: this.usage,
    };
  },
  wire({ includeUsage = false } = {}) {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const ev = [ch({ role: 'assistant', content: '' }), ...this.textParts.map((t) => ch({ content: t })), ch({}, 'stop')];
    if (includeUsage) ev.push({ ...base, choices: [], usage: this.usage });
    return ev.map(dataEvent).join('') + 'data: [DONE]\n\n';
  },
};

export const SSE_TOOLS = {
  id: 'chatcmpl-sse-1',
  model: 'sse-tools',
  textParts: ['Let me check ', 'the weather ☀️ ', 'and search the web – ', 'one moment.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['get_weather', 'search_web'],
  finishReason: 'tool_calls',
  usage: { prompt_tokens: 25, completion_tokens: 19, total_tokens: 44 },
  metaUsage: { input_tokens: 25, output_tokens: 19, total_tokens: 44 },
  // The chunks as OpenAI sends them: with includeUsage (the request's
  // stream_options.include_usage) every chunk has "usage": null and a last
  // chunk with `choices: []` carries the usage; without it, neither.
  events({ includeUsage = false } = {}) {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model, system_fingerprint: 'fp_test' };
    const ch = (delta, finish = null) => ({
      ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}),
    });
    const ev = [];
    ev.push(ch({ role: 'assistant', content: '', refusal: null }));
    for (const t of this.textParts) ev.push(ch({ content: t }));
    ev.push(ch({ tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    ev.push(ch({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    ev.push(ch({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    ev.push(ch({ tool_calls: [{ index: 1, id: 'call_s1', type: 'function', function: { name: 'search_web', arguments: '' } }] }));
    ev.push(ch({ tool_calls: [{ index: 1, function: { arguments: '{"q":"Paris events"}' } }] }));
    ev.push(ch({}, this.finishReason));
    if (includeUsage) ev.push({ ...base, choices: [], usage: this.usage });
    return ev;
  },
  // The exact bytes the upstream sends.
  wire(opts) {
    return this.events(opts).map(dataEvent).join('') + 'data: [DONE]\n\n';
  },
};

export const SSE_TEXT = {
  id: 'chatcmpl-sse-2',
  model: 'sse-text',
  textParts: ['Hello', ', world', '! Ünïcödé ✓'],
  get text() { return this.textParts.join(''); },
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const ev = [ch({ role: 'assistant', content: '' }), ...this.textParts.map((t) => ch({ content: t })), ch({}, 'stop')];
    return ev.map(dataEvent).join('') + 'data: [DONE]\n\n';
  },
};

// The answer after tool results (the last message has role `tool`), for
// clients that run json-tools' or sse-tools' calls themselves (agents):
// text only, no tools, no meta.
export const AFTER_TOOLS = {
  id: 'chatcmpl-after-tools',
  model: 'after-tools',
  text: 'It is sunny in Paris, 21 °C, and the Louvre has an evening opening.',
  body() {
    return {
      id: this.id, object: 'chat.completion', created: CREATED, model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 60, completion_tokens: 16, total_tokens: 76 },
    };
  },
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ev = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: this.text }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ];
    return ev.map(dataEvent).join('') + 'data: [DONE]\n\n';
  },
};

// The streamed form of JSON_META: the gateway's own tools come in a
// meta-only event, which llm_meta withholds and folds into its final meta
// chunk.
export const SSE_META = {
  id: 'chatcmpl-sse-meta',
  model: 'sse-meta',
  textParts: ['Paris is sunny, ', '21 °C; the Louvre ', 'is open until 18:00.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['web_search', 'memory_lookup'],
  finishReason: 'stop',
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const ev = [ch({ role: 'assistant', content: '' }), ...this.textParts.map((t) => ch({ content: t })), ch({}, 'stop'), { meta: { tools_used: this.toolsUsed } }];
    return ev.map(dataEvent).join('') + 'data: [DONE]\n\n';
  },
};

// Structured mode (SPEC 7): what a model answers under the json_schema
// response_format. `reply` is not the first key, as the instruction asks for
// entities first; the streamed JSON escapes every non-ASCII character
// (\uXXXX, a surrogate pair for U+1F324) and is cut every 5 characters, so
// escapes are split across deltas.
export const STRUCTURED = {
  model: 'structured',
  id: 'chatcmpl-structured-1',
  reply: '**Paris**: sunny 🌤 ☀️, 21 °C.\nEnjoy "the" day!',
  get object() {
    return {
      entities: [{ name: 'Paris', type: 'location' }],
      reply: this.reply,
      intent: 'question',
      requires_user_action: false,
      topics: ['weather', 'travel'],
      scheduling_intent: { detected: false, datetime_mentioned: '' },
    };
  },
  structuredMetadata: {
    intent: 'question',
    requires_user_action: false,
    entities: [{ name: 'Paris', type: 'location' }],
    topics: ['weather', 'travel'],
    scheduling: { detected: false, datetime_mentioned: '' },
  },
  // the model's content as JSON text, non-ASCII escaped
  content() {
    return JSON.stringify(this.object).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  },
  body() {
    return {
      id: this.id, object: 'chat.completion', created: CREATED, model: this.model,
      choices: [{ index: 0, message: { role: 'assistant', content: this.content() }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 40, total_tokens: 90 },
    };
  },
  wire() {
    const base = { id: this.id, object: 'chat.completion.chunk', created: CREATED, model: this.model };
    const ch = (delta, finish = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const c = this.content();
    const ev = [ch({ role: 'assistant', content: '' })];
    for (let i = 0; i < c.length; i += 5) ev.push(ch({ content: c.slice(i, i + 5) }));
    ev.push(ch({}, 'stop'));
    return ev.map(dataEvent).join('') + 'data: [DONE]\n\n';
  },
};

// Agent Hustle's data elements, as its `2:` parts carry them (objects with a
// `type`; docs/reference.md, stream conversion).
export const HUSTLE_REASONING = {
  type: 'reasoning',
  thinking: 'The user wants the weather in Paris; get_weather answers that.',
  activeIntent: 'weather_lookup',
  categories: ['weather', 'travel'],
  confidence: 0.9,
};
export const HUSTLE_PATH_INFO = { type: 'path_info', tokensIn: 1200, tokensOut: 85, costUsd: 0.0042 };

export const V4_DATA = {
  model: 'v4-data',
  messageId: 'msg-v4-hustle',
  // `2:` parts, as Agent Hustle sends them
  dataParts: [HUSTLE_REASONING, HUSTLE_PATH_INFO],
  textParts: ['Checking ', 'Paris… ', 'it is sunny, 21 °C.'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['get_weather'],
  finishReason: 'tool_calls', // the converter maps tool-calls -> tool_calls
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
  // the `d:` part's usage, and Hustle's own cost (path_info.costUsd)
  metaUsage: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
  costUsd: HUSTLE_PATH_INFO.costUsd,
  hustle: { reasoning: HUSTLE_REASONING, path_info: HUSTLE_PATH_INFO },
  // SPEC 5.1 "Hustle summary"
  structuredResult: {
    type: 'key_value',
    entries: [
      { key: 'Intent', value: 'weather_lookup' },
      { key: 'Reasoning', value: HUSTLE_REASONING.thinking },
      { key: 'Categories', value: 'weather, travel' },
      { key: 'Confidence', value: '0.9' },
      { key: 'Tokens', value: '1200 in / 85 out' },
      { key: 'Cost', value: '$0.0042' },
    ],
  },
};

// An ai@4 data stream that fails after some text: the writer turns the
// thrown error into a `3:` part.
export const V4_ERROR = { model: 'v4-error', messageId: 'msg-v4-error', text: 'Partial answer ', error: 'upstream exploded' };

export const V7_UI = {
  model: 'v7-ui',
  messageId: 'msg-v7-ui',
  textParts: ['Looking up ', 'Paris… ', 'sunny, 21 °C ☀️'],
  get text() { return this.textParts.join(''); },
  toolsUsed: ['get_weather'],
  finishReason: 'tool_calls',
  reasoning: {
    type: 'reasoning',
    thinking: 'Weather question: call get_weather for Paris.',
    activeIntent: 'weather_lookup',
    confidence: 0.9,
  },
  get hustle() { return { reasoning: this.reasoning }; },
  get structuredResult() {
    return {
      type: 'key_value',
      entries: [
        { key: 'Intent', value: 'weather_lookup' },
        { key: 'Reasoning', value: this.reasoning.thinking },
        { key: 'Confidence', value: '0.9' },
      ],
    };
  },
};

// Aborted after the first text part: the client has that text, and the
// stream ends as a finished one (SPEC 5.2: `abort` is `finish` with
// finish_reason stop), with no tool call made.
export const V7_ABORT = {
  model: 'v7-abort',
  messageId: 'msg-v7-abort',
  textParts: ['Looking up ', 'Paris… ', 'sunny, 21 °C ☀️'],
  abortAfter: 1,
  get text() { return this.textParts.slice(0, this.abortAfter).join(''); },
  finishReason: 'stop',
};
