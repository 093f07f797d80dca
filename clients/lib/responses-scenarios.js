// The scripted upstream's OpenAI Responses API replies (POST /v1/responses),
// by the request's model, JSON or an event stream as the request's
// `stream` asks, in the API's wire format: a response object, or named
// events (`event: <type>`, a `sequence_number` from 0, no [DONE]) ending in
// response.completed, whose response carries the output and the usage.
//
//   resp-tools  a message, then two function calls (get_weather,
//               search_web) for the client to run; usage with cached and
//               reasoning tokens and OpenRouter's `cost`
//   resp-meta   the gateway searched the web itself (a web_search_call
//               item) and names its own memory_lookup in `meta` (JSON: the
//               response's top-level meta; stream: a meta-only event); its
//               usage has no cost (the stacks' price table prices it)
//   resp-incomplete  cut at max_output_tokens: response.incomplete ends
//               the stream, its message item incomplete
//   resp-failed a function call and some text, then response.failed with
//               its error (no price row, no cost: meta has no cost_usd)

import { CREATED } from './chat-scenarios.js';
import { metaOnlyEvent, namedEvent } from './wire.js';

// The fields of a response object besides id, status, model, output, usage.
const responseFields = {
  object: 'response',
  created_at: CREATED,
  background: false,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  user: null,
  metadata: {},
};

const outputText = (text) => ({ type: 'output_text', annotations: [], logprobs: [], text });

const messageItem = (id, text, status = 'completed') => ({
  id, type: 'message', status, role: 'assistant', content: text === null ? [] : [outputText(text)],
});

const functionCallItem = (c, status = 'completed') => ({
  id: c.id, type: 'function_call', status, arguments: status === 'completed' ? c.arguments : '', call_id: c.callId, name: c.name,
});

// The events of one output item, numbered later by the stream.
function messageEvents(index, id, parts, status = 'completed') {
  const text = parts.join('');
  const at = { item_id: id, output_index: index, content_index: 0 };
  return [
    { type: 'response.output_item.added', output_index: index, item: messageItem(id, null, 'in_progress') },
    { type: 'response.content_part.added', ...at, part: outputText('') },
    ...parts.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, text, logprobs: [] },
    { type: 'response.content_part.done', ...at, part: outputText(text) },
    { type: 'response.output_item.done', output_index: index, item: messageItem(id, text, status) },
  ];
}

function functionCallEvents(index, c) {
  const at = { item_id: c.id, output_index: index };
  return [
    { type: 'response.output_item.added', output_index: index, item: functionCallItem(c, 'in_progress') },
    ...c.fragments.map((delta) => ({ type: 'response.function_call_arguments.delta', ...at, delta })),
    { type: 'response.function_call_arguments.done', ...at, arguments: c.arguments },
    { type: 'response.output_item.done', output_index: index, item: functionCallItem(c) },
  ];
}

const webSearchItem = (id, query, status = 'completed') => ({
  id, type: 'web_search_call', status, action: { type: 'search', query },
});

function webSearchEvents(index, id, query) {
  const at = { output_index: index, item_id: id };
  return [
    { type: 'response.output_item.added', output_index: index, item: webSearchItem(id, query, 'in_progress') },
    { type: 'response.web_search_call.in_progress', ...at },
    { type: 'response.web_search_call.searching', ...at },
    { type: 'response.web_search_call.completed', ...at },
    { type: 'response.output_item.done', output_index: index, item: webSearchItem(id, query) },
  ];
}

// What the scenarios share: the response object, its stream, its wire.
// `end` is the final status (completed unless the scenario says), which
// names the terminal event.
const responsesScenario = {
  end: 'completed',
  response(status = this.end) {
    const done = status === this.end;
    return {
      id: this.id, ...responseFields, status,
      error: done ? this.error ?? null : null, incomplete_details: done ? this.incompleteDetails ?? null : null,
      model: this.model, output: done ? this.output() : [], usage: done ? this.usage : null,
    };
  },
  // The JSON reply.
  body() {
    return this.upstreamMeta ? { ...this.response(), meta: this.upstreamMeta } : this.response();
  },
  // Every event of the stream, each with its sequence_number.
  events() {
    const items = this.itemEvents();
    const ev = [
      { type: 'response.created', response: this.response('in_progress') },
      { type: 'response.in_progress', response: this.response('in_progress') },
      ...items,
      { type: `response.${this.end}`, response: this.response() },
    ];
    return ev.map((e, i) => ({ type: e.type, sequence_number: i, ...e }));
  },
  // The bytes the upstream sends: the events, and the gateway's meta-only
  // event (when it has one) right after response.in_progress.
  wire() {
    const ev = this.events().map(namedEvent);
    if (this.upstreamMeta) ev.splice(2, 0, metaOnlyEvent(this.upstreamMeta));
    return ev.join('');
  },
};

export const RESP_TOOLS = {
  ...responsesScenario,
  id: 'resp_tools_1',
  model: 'resp-tools',
  messageId: 'msg_resp_tools',
  textParts: ['Let me check ', 'the weather ☀️ ', 'and search the web – ', 'one moment.'],
  get text() { return this.textParts.join(''); },
  calls: [
    { id: 'fc_w1', callId: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}', fragments: ['{"city":', '"Paris"}'] },
    { id: 'fc_s1', callId: 'call_s1', name: 'search_web', arguments: '{"q":"Paris events"}', fragments: ['{"q":"Paris', ' events"}'] },
  ],
  toolsUsed: ['get_weather', 'search_web'],
  usage: {
    input_tokens: 120, input_tokens_details: { cached_tokens: 100 },
    output_tokens: 45, output_tokens_details: { reasoning_tokens: 12 },
    total_tokens: 165, cost: 0.000417,
  },
  metaUsage: { input_tokens: 120, output_tokens: 45, total_tokens: 165, cached_input_tokens: 100, reasoning_tokens: 12 },
  costUsd: 0.000417,
  output() {
    return [messageItem(this.messageId, this.text), ...this.calls.map((c) => functionCallItem(c))];
  },
  itemEvents() {
    return [messageEvents(0, this.messageId, this.textParts), ...this.calls.map((c, i) => functionCallEvents(i + 1, c))].flat();
  },
};

export const RESP_META = {
  ...responsesScenario,
  id: 'resp_meta_1',
  model: 'resp-meta',
  messageId: 'msg_resp_meta',
  searchId: 'ws_resp_meta',
  query: 'Louvre opening hours',
  textParts: ['The Louvre ', 'is open ', 'until 18:00 today.'],
  get text() { return this.textParts.join(''); },
  upstreamMeta: { tools_used: ['memory_lookup'] },
  // the gateway's meta first (4.1 merge), then the web_search_call item
  toolsUsed: ['memory_lookup', 'web_search'],
  usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 0 }, output_tokens: 60, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 960 },
  metaUsage: { input_tokens: 900, output_tokens: 60, total_tokens: 960, cached_input_tokens: 0, reasoning_tokens: 0 },
  output() {
    return [webSearchItem(this.searchId, this.query), messageItem(this.messageId, this.text)];
  },
  itemEvents() {
    return [...webSearchEvents(0, this.searchId, this.query), ...messageEvents(1, this.messageId, this.textParts)];
  },
};

// Cut at max_output_tokens: the terminal event is response.incomplete, the
// message item is incomplete.
export const RESP_INCOMPLETE = {
  ...responsesScenario,
  id: 'resp_incomplete_1',
  model: 'resp-incomplete',
  end: 'incomplete',
  incompleteDetails: { reason: 'max_output_tokens' },
  messageId: 'msg_resp_incomplete',
  textParts: ['Paris has ', 'many museums: ', 'the Louvre, '],
  get text() { return this.textParts.join(''); },
  toolsUsed: [],
  usage: { input_tokens: 40, input_tokens_details: { cached_tokens: 0 }, output_tokens: 16, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 56, cost: 0.0000328 },
  metaUsage: { input_tokens: 40, output_tokens: 16, total_tokens: 56, cached_input_tokens: 0, reasoning_tokens: 0 },
  costUsd: 0.0000328,
  output() {
    return [messageItem(this.messageId, this.text, 'incomplete')];
  },
  itemEvents() {
    return messageEvents(0, this.messageId, this.textParts, 'incomplete');
  },
};

// Failed after a function call and some text: response.failed ends the
// stream, with the error and the usage so far (JSON: a response object
// with status failed).
export const RESP_FAILED = {
  ...responsesScenario,
  id: 'resp_failed_1',
  model: 'resp-failed',
  end: 'failed',
  error: { code: 'server_error', message: 'The model failed to finish its answer.' },
  messageId: 'msg_resp_failed',
  textParts: ['It is ', 'sunny in '],
  get text() { return this.textParts.join(''); },
  calls: [{ id: 'fc_w2', callId: 'call_w2', name: 'get_weather', arguments: '{"city":"Paris"}', fragments: ['{"city":"Paris"}'] }],
  toolsUsed: ['get_weather'],
  usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 59 },
  metaUsage: { input_tokens: 50, output_tokens: 9, total_tokens: 59, cached_input_tokens: 0, reasoning_tokens: 0 },
  output() {
    return [...this.calls.map((c) => functionCallItem(c)), messageItem(this.messageId, this.text, 'incomplete')];
  },
  itemEvents() {
    return [...functionCallEvents(0, this.calls[0]), ...messageEvents(1, this.messageId, this.textParts, 'incomplete')];
  },
};

export const RESPONSES_SCENARIOS = Object.fromEntries([RESP_TOOLS, RESP_META, RESP_INCOMPLETE, RESP_FAILED].map((s) => [s.model, s]));
