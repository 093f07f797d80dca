// The scripted upstream's Anthropic Messages replies (POST /v1/messages), by
// the request's model, JSON or an event stream as the request's `stream`
// asks, in the API's wire format: a message, or named events
// (message_start, a ping, content_block_start/_delta/_stop per block,
// message_delta, message_stop; no [DONE]).
//
//   claude-tools  text, then two tool_use blocks (get_weather, search_web)
//                 for the client to run, stop_reason tool_use; usage with
//                 prompt-cache reads and writes and no cost (the stacks'
//                 price table prices every claude-* model)
//   claude-meta   the gateway searched the web itself (server_tool_use and
//                 web_search_tool_result blocks) and names its own
//                 memory_lookup in `meta` (JSON: the message's top-level
//                 meta; stream: a meta-only event); its usage carries
//                 OpenRouter's `cost`, which wins over the price table

import { metaOnlyEvent, namedEvent } from './wire.js';

// Streams send the input in 3-character pieces, after an empty first one
// as Anthropic does.
const jsonFragments = (s) => ['', ...(s.match(/.{1,3}/gsu) ?? [])];

// A block's events after its content_block_start.
function blockDeltas(index, block) {
  const d = (delta) => ({ type: 'content_block_delta', index, delta });
  switch (block.type) {
    case 'text':
      return block.parts.map((text) => d({ type: 'text_delta', text }));
    case 'tool_use':
    case 'server_tool_use':
      return jsonFragments(JSON.stringify(block.input)).map((partial_json) => d({ type: 'input_json_delta', partial_json }));
    default:
      return []; // a result block comes whole in its content_block_start
  }
}

// A block as the message has it, and as its content_block_start opens it.
function whole(block) {
  const { parts, ...rest } = block;
  return block.type === 'text' ? { type: 'text', text: parts.join('') } : rest;
}

function opened(block) {
  const b = whole(block);
  if (b.type === 'text') return { type: 'text', text: '' };
  if (b.type === 'tool_use' || b.type === 'server_tool_use') return { ...b, input: {} };
  return b;
}

const anthropicScenario = {
  message() {
    return {
      id: this.id, type: 'message', role: 'assistant', model: this.model,
      content: this.blocks.map(whole), stop_reason: this.stopReason, stop_sequence: null, usage: this.usage,
    };
  },
  // The JSON reply.
  body() {
    return this.upstreamMeta ? { ...this.message(), meta: this.upstreamMeta } : this.message();
  },
  // Every event of the stream: message_start has the input usage and one
  // output token, message_delta the stop reason and the output usage.
  events() {
    const { output_tokens: outputTokens, cost, ...input } = this.usage;
    const start = { ...this.message(), content: [], stop_reason: null, usage: { ...input, output_tokens: 1 } };
    const ev = [{ type: 'message_start', message: start }, { type: 'ping' }];
    this.blocks.forEach((b, index) => {
      ev.push({ type: 'content_block_start', index, content_block: opened(b) });
      ev.push(...blockDeltas(index, b));
      ev.push({ type: 'content_block_stop', index });
    });
    const deltaUsage = { output_tokens: outputTokens, ...(cost === undefined ? {} : { cost }) };
    ev.push({ type: 'message_delta', delta: { stop_reason: this.stopReason, stop_sequence: null }, usage: deltaUsage });
    ev.push({ type: 'message_stop' });
    return ev;
  },
  // The bytes the upstream sends: the events, and the gateway's meta-only
  // event (when it has one) right after message_start.
  wire() {
    const ev = this.events().map(namedEvent);
    if (this.upstreamMeta) ev.splice(1, 0, metaOnlyEvent(this.upstreamMeta));
    return ev.join('');
  },
};

export const CLAUDE_TOOLS = {
  ...anthropicScenario,
  id: 'msg_claude_tools',
  model: 'claude-tools',
  textParts: ['Let me check ', 'the weather ☀️ ', 'and search the web – ', 'one moment.'],
  get text() { return this.textParts.join(''); },
  get blocks() {
    return [
      { type: 'text', parts: this.textParts },
      { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_s1', name: 'search_web', input: { q: 'Paris events' } },
    ];
  },
  stopReason: 'tool_use',
  toolsUsed: ['get_weather', 'search_web'],
  usage: { input_tokens: 30, cache_creation_input_tokens: 20, cache_read_input_tokens: 100, output_tokens: 45, service_tier: 'standard' },
  // input: 30 plain + 100 read from the cache + 20 written to it
  metaUsage: { input_tokens: 150, output_tokens: 45, total_tokens: 195, cached_input_tokens: 100 },
};

export const CLAUDE_META = {
  ...anthropicScenario,
  id: 'msg_claude_meta',
  model: 'claude-meta',
  textParts: ['The Louvre ', 'is open ', 'until 18:00 today.'],
  get text() { return this.textParts.join(''); },
  get blocks() {
    return [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'Louvre opening hours' } },
      {
        type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1',
        content: [{ type: 'web_search_result', url: 'https://www.louvre.fr/en/visit/hours', title: 'Hours – Louvre', encrypted_content: 'RXhhbXBsZQ==', page_age: null }],
      },
      { type: 'text', parts: this.textParts },
    ];
  },
  stopReason: 'end_turn',
  upstreamMeta: { tools_used: ['memory_lookup'] },
  // the gateway's meta first (4.1 merge), then the server_tool_use block
  toolsUsed: ['memory_lookup', 'web_search'],
  usage: {
    input_tokens: 410, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 38,
    server_tool_use: { web_search_requests: 1 }, service_tier: 'standard', cost: 0.010573,
  },
  metaUsage: { input_tokens: 410, output_tokens: 38, total_tokens: 448, cached_input_tokens: 0 },
  costUsd: 0.010573,
};

// POST /v1/messages/count_tokens: the count of a request's input, whatever
// the model. It is no reply to rewrite: llm_meta must pass it as it came.
export const COUNT_TOKENS = { input_tokens: 14 };

export const ANTHROPIC_SCENARIOS = { [CLAUDE_TOOLS.model]: CLAUDE_TOOLS, [CLAUDE_META.model]: CLAUDE_META };
