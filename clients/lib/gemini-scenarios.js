// The scripted upstream's Gemini replies (POST /v1beta/models/{model}:
// generateContent, and :streamGenerateContent?alt=sse), by the model of the
// path, in the API's wire format: a GenerateContentResponse, or a stream of
// them as `data:` events framed with CRLF, as Google frames them, with no
// event names and no [DONE]. The last event has the finishReason.
//
//   gemini-tools  a thought, text in pieces, then two functionCall parts
//                 (get_weather, search_web) for the client to run; usage
//                 with cached content and thoughts (the stacks' price table
//                 prices every gemini-* model)
//   gemini-meta   the gateway ran code itself (text, executableCode and
//                 codeExecutionResult parts, then the answer) and names its
//                 own memory_lookup in `meta` (JSON: the reply's top-level
//                 meta; stream: a meta-only event); its usage counts a
//                 tool-use prompt

import { metaOnlyEvent } from './wire.js';

// One Gemini event.
export const geminiEvent = (obj) => `data: ${JSON.stringify(obj)}\r\n\r\n`;

const geminiScenario = {
  // A reply (or event) with the parts of candidate 0.
  reply(parts, { finish = false, usage = this.promptUsage() } = {}) {
    return {
      candidates: [{ content: { parts, role: 'model' }, ...(finish ? { finishReason: 'STOP' } : {}), index: 0 }],
      usageMetadata: usage,
      modelVersion: this.model,
      responseId: this.responseId,
    };
  },
  // What every event but the last reports: the prompt, as Gemini does.
  promptUsage() {
    const { promptTokenCount, cachedContentTokenCount } = this.usage;
    return { promptTokenCount, ...(cachedContentTokenCount ? { cachedContentTokenCount } : {}), totalTokenCount: promptTokenCount };
  },
  // The JSON reply: every part, adjacent text joined as Gemini joins it.
  body() {
    const parts = [];
    for (const p of this.events.flat()) {
      const last = parts.at(-1);
      if (p.text !== undefined && !p.thought && last?.text !== undefined && !last.thought) last.text += p.text;
      else parts.push({ ...p });
    }
    const r = this.reply(parts, { finish: true, usage: this.usage });
    return this.upstreamMeta ? { ...r, meta: this.upstreamMeta } : r;
  },
  // The stream's events: each element of `events` is one event's parts.
  streamEvents() {
    return this.events.map((parts, i) => (i === this.events.length - 1
      ? this.reply(parts, { finish: true, usage: this.usage })
      : this.reply(parts)));
  },
  // The bytes the upstream sends: the events, and the gateway's meta-only
  // event (when it has one) after the first.
  wire() {
    const ev = this.streamEvents().map(geminiEvent);
    if (this.upstreamMeta) ev.splice(1, 0, metaOnlyEvent(this.upstreamMeta));
    return ev.join('');
  },
};

// The text an app shows: the text parts that are not thoughts.
const textOf = (events) => events.flat().filter((p) => p.text !== undefined && !p.thought).map((p) => p.text).join('');

export const GEMINI_TOOLS = {
  ...geminiScenario,
  model: 'gemini-tools',
  responseId: 'gemini-tools-1',
  events: [
    [{ text: 'The user wants the weather.', thought: true }],
    [{ text: 'Let me check ' }],
    [{ text: 'the weather ☀️ and search the web – ' }],
    [{ text: 'one moment.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
      { functionCall: { name: 'search_web', args: { q: 'Paris events' } } }],
  ],
  get text() { return textOf(this.events); },
  calls: [['get_weather', { city: 'Paris' }], ['search_web', { q: 'Paris events' }]],
  toolsUsed: ['get_weather', 'search_web'],
  usage: { promptTokenCount: 120, cachedContentTokenCount: 100, candidatesTokenCount: 30, thoughtsTokenCount: 12, totalTokenCount: 162 },
  // input: the prompt (cached content included); output: candidates + thoughts
  metaUsage: { input_tokens: 120, output_tokens: 42, total_tokens: 162, cached_input_tokens: 100, reasoning_tokens: 12 },
};

export const GEMINI_META = {
  ...geminiScenario,
  model: 'gemini-meta',
  responseId: 'gemini-meta-1',
  events: [
    [{ text: 'Let me compute it. ' }],
    [{ executableCode: { language: 'PYTHON', code: 'print(6 * 7)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '42\n' } }],
    [{ text: 'The answer is 42.' }],
  ],
  get text() { return textOf(this.events); },
  calls: [],
  upstreamMeta: { tools_used: ['memory_lookup'] },
  // the gateway's tool first (its meta comes first), then the code it ran
  toolsUsed: ['memory_lookup', 'code_execution'],
  usage: { promptTokenCount: 50, toolUsePromptTokenCount: 30, candidatesTokenCount: 20, totalTokenCount: 100 },
  metaUsage: { input_tokens: 80, output_tokens: 20, total_tokens: 100 },
};

export const GEMINI_SCENARIOS = { [GEMINI_TOOLS.model]: GEMINI_TOOLS, [GEMINI_META.model]: GEMINI_META };

// The path of a Gemini method: …/models/{model}:generateContent or
// :streamGenerateContent.
export const GEMINI_PATH = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
