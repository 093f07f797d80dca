// llm_meta playground: a chat page that talks to llm_meta and shows the
// reply text and the meta object the way a chat UI would render them.
// Plain script, no build step. The pure helpers at the top (SSE parsing,
// meta merging, content extraction) are also exported for Node tests.
'use strict';

/* ------------------------------------------------------------------ */
/* Pure helpers                                                        */
/* ------------------------------------------------------------------ */

// SSEParser splits a text/event-stream into events by the WHATWG rules:
// lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at the
// start of the next are one line end); a blank line ends an event; lines
// starting with ':' are comments; several data: lines join with '\n'; one
// space after the colon is dropped; a leading BOM is ignored; end() also
// ends an unterminated last event.
class SSEParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buf = '';
    this.data = [];
    this.event = '';
    this.started = false;
    this.skipLF = false;
  }

  push(text) {
    if (!text) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLF) {
      this.skipLF = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    this.buf += text;
    let start = 0;
    for (;;) {
      let i = start;
      const n = this.buf.length;
      while (i < n && this.buf[i] !== '\n' && this.buf[i] !== '\r') i++;
      if (i >= n) break;
      const line = this.buf.slice(start, i);
      if (this.buf[i] === '\r') {
        if (i + 1 < n) {
          start = this.buf[i + 1] === '\n' ? i + 2 : i + 1;
        } else {
          start = i + 1;
          this.skipLF = true; // the LF of a CRLF may come in the next chunk
        }
      } else {
        start = i + 1;
      }
      this.line(line);
    }
    this.buf = this.buf.slice(start);
  }

  end() {
    if (this.buf !== '') this.line(this.buf);
    this.buf = '';
    this.dispatch();
  }

  line(line) {
    if (line === '') return this.dispatch();
    if (line[0] === ':') return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }

  dispatch() {
    if (this.data.length > 0) {
      this.onEvent({ event: this.event || 'message', data: this.data.join('\n') });
    }
    this.data = [];
    this.event = '';
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// mergeMeta applies SPEC 4.1: later keys win, except tools_used (union in
// first-seen order, non-empty strings only) and prompt_trimmed_to (smaller
// wins). A stream normally carries one final meta event; merging keeps the
// page right when an upstream sends several.
function mergeMeta(a, b) {
  const out = Object.assign({}, a);
  if (!isObject(b)) return out;
  for (const [k, v] of Object.entries(b)) {
    if (k === 'tools_used') {
      const seen = new Set();
      const list = [];
      for (const name of [].concat(out.tools_used || [], Array.isArray(v) ? v : [])) {
        if (typeof name === 'string' && name !== '' && !seen.has(name)) {
          seen.add(name);
          list.push(name);
        }
      }
      out.tools_used = list;
    } else if (k === 'prompt_trimmed_to' && typeof v === 'number' && typeof out[k] === 'number') {
      out[k] = Math.min(out[k], v);
    } else {
      out[k] = v;
    }
  }
  return out;
}

// textOf reads a message's content: a string, or an array of parts whose
// text values join with '\n'.
function textOf(v) {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) {
    const parts = v.map((p) => (p && typeof p.text === 'string' ? p.text : null)).filter((t) => t !== null);
    return parts.length ? parts.join('\n') : null;
  }
  return null;
}

// responsesText is the text of a Responses API response: the output_text
// parts of its message items, parts of one item concatenated, items joined
// with '\n' (as llm_meta's run-once reads it, SPEC 4.4).
function responsesText(resp) {
  const texts = [];
  for (const it of resp.output) {
    if (!isObject(it) || it.type !== 'message' || !Array.isArray(it.content)) continue;
    const parts = it.content.filter((p) => isObject(p) && p.type === 'output_text' && typeof p.text === 'string');
    if (parts.length) texts.push(parts.map((p) => p.text).join(''));
  }
  return texts.length ? texts.join('\n') : null;
}

// anthropicText is the text of an Anthropic message: its text blocks joined
// with '\n' (SPEC 4.5).
function anthropicText(msg) {
  const texts = msg.content.filter((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text);
  return texts.length ? texts.join('\n') : null;
}

// isGemini tells a Gemini GenerateContentResponse (a reply or one event of
// its stream) as llm_meta does (SPEC 4): candidates or promptFeedback, and
// no choices.
function isGemini(obj) {
  return isObject(obj) && (Array.isArray(obj.candidates) || isObject(obj.promptFeedback)) && obj.choices === undefined;
}

// geminiCandidate0 is the candidate whose index is 0 (an absent index is 0).
function geminiCandidate0(obj) {
  if (!Array.isArray(obj.candidates)) return null;
  return obj.candidates.find((c) => isObject(c) && (c.index === undefined || c.index === 0)) || null;
}

// geminiParts splits the text parts of candidate 0 into the answer and the
// thoughts ("thought": true), each concatenated (SPEC 4.6).
function geminiParts(obj) {
  const out = { text: '', thought: '' };
  const c = geminiCandidate0(obj);
  const parts = c && isObject(c.content) && Array.isArray(c.content.parts) ? c.content.parts : [];
  for (const p of parts) {
    if (!isObject(p) || typeof p.text !== 'string') continue;
    if (p.thought === true) out.thought += p.text;
    else out.text += p.text;
  }
  return out;
}

// geminiBlocked is the message of a prompt Gemini blocked, else null.
function geminiBlocked(obj) {
  const fb = obj.promptFeedback;
  return isObject(fb) && fb.blockReason ? `Blocked: ${fb.blockReason}` : null;
}

// contentOf finds the reply text of a JSON answer: a Responses object's
// output, an Anthropic message's text blocks, a Gemini reply's text parts
// of candidate 0, else in the order the JARVIS
// edge function used: {content} of a run-once reply, choices[0].message or
// .delta, choices[0].text, then output, response, message, text.
function contentOf(obj) {
  if (!isObject(obj)) return null;
  if (obj.object === 'response' && Array.isArray(obj.output)) return responsesText(obj);
  if (obj.type === 'message' && Array.isArray(obj.content)) return anthropicText(obj);
  if (isGemini(obj)) return geminiParts(obj).text || null;
  const c0 = Array.isArray(obj.choices) ? obj.choices[0] : null;
  if (isObject(c0)) {
    for (const k of ['message', 'delta']) {
      const m = c0[k];
      if (typeof m === 'string') return m;
      if (isObject(m)) {
        const t = textOf(m.content) ?? textOf(m.text);
        if (t !== null) return t;
      }
    }
    if (typeof c0.text === 'string') return c0.text;
  }
  for (const k of ['content', 'output', 'response', 'message', 'text']) {
    const t = textOf(obj[k]);
    if (t !== null) return t;
  }
  return null;
}

// errorMessage reads the message of an error body: the edge shape
// {"error": "..."}, OpenAI's {"error": {"message": ...}}, or the raw text.
function errorMessage(obj, raw, status, statusText) {
  if (isObject(obj)) {
    if (typeof obj.error === 'string' && obj.error !== '') return obj.error;
    if (isObject(obj.error) && typeof obj.error.message === 'string') return obj.error.message;
    if (typeof obj.message === 'string' && obj.message !== '') return obj.message;
  }
  const text = (raw || '').trim();
  if (text) return text.length > 600 ? text.slice(0, 600) + '…' : text;
  return `${status} ${statusText || ''}`.trim();
}

// INTERRUPTED_MESSAGE is the message of the error event llm_meta writes at
// the end of a stream the upstream cut short, with mark_interrupted on
// (SPEC 11.1); Anthropic's and Gemini's events name no code of their own.
const INTERRUPTED_MESSAGE = 'The upstream ended the reply before it was complete.';

// isInterruptionEvent tells llm_meta's own "cut short" event (SPEC 11.1,
// mark_interrupted) from an error the upstream sent: chat's error type and
// Responses' code upstream_interrupted, Anthropic's and Gemini's message,
// or a meta that says interrupted.
function isInterruptionEvent(obj) {
  if (!isObject(obj)) return false;
  const err = isObject(obj.error) ? obj.error : null;
  if (err && err.type === 'upstream_interrupted') return true;
  if (obj.type === 'error' && obj.code === 'upstream_interrupted') return true;
  if (isObject(obj.meta) && obj.meta.interrupted === true && (err || obj.type === 'error')) return true;
  return (err && err.message === INTERRUPTED_MESSAGE) || (obj.type === 'error' && obj.message === INTERRUPTED_MESSAGE);
}

// toolChips lists what the "Used:" chips show: one chip per call of
// meta.tool_calls (SPEC 11.3: name, arguments, clipped), in call order, then
// the names of tools_used that no call names (tools the gateway ran, other
// tool sources); without tool_calls, one chip per name of tools_used.
function toolChips(meta) {
  const chips = [];
  const named = new Set();
  for (const c of Array.isArray(meta.tool_calls) ? meta.tool_calls : []) {
    if (!isObject(c) || typeof c.name !== 'string' || c.name === '') continue;
    named.add(c.name);
    chips.push({ name: c.name, args: typeof c.arguments === 'string' ? c.arguments : cellText(c.arguments),
      clipped: c.clipped === true });
  }
  for (const t of Array.isArray(meta.tools_used) ? meta.tools_used : []) {
    if (typeof t === 'string' && t !== '' && !named.has(t)) chips.push({ name: t });
  }
  return chips;
}

// argsShort is a call's arguments on one line, for its chip: a JSON
// object's members as `key: value` (strings without their quotes), any other
// text with its white space collapsed, cut at max characters with '…'.
function argsShort(text, max = 60) {
  let s;
  try {
    const v = JSON.parse(text);
    s = isObject(v)
      ? Object.entries(v).map(([k, x]) => `${k}: ${typeof x === 'string' ? x : JSON.stringify(x)}`).join(', ')
      : JSON.stringify(v);
  } catch {
    s = text;
  }
  s = s.replace(/\s+/g, ' ').trim();
  return [...s].length > max ? [...s].slice(0, max - 1).join('') + '…' : s;
}

// argsPretty is a call's arguments to read in full: JSON indented, text that
// is not JSON (arguments clipped or streamed half-way) as it came.
function argsPretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

// PROTOCOLS describes the endpoints a person can pick: the path, how the
// page labels it, and the event that ends its stream. Gemini's path names
// the model and the method (buildRequest).
const PROTOCOLS = {
  chat: { path: '/v1/chat/completions', label: 'Chat Completions', terminal: 'data: [DONE]' },
  responses: { path: '/v1/responses', label: 'Responses', terminal: 'response.completed' },
  anthropic: { path: '/v1/messages', label: 'Anthropic Messages', terminal: 'message_stop' },
  gemini: { path: '/v1beta/models/{model}:generateContent', label: 'Gemini', terminal: 'a finishReason' },
  edge: { path: '/functions/v1/jarvis', label: 'edge', terminal: 'data: [DONE]' },
};

// structuredApplies: structured mode is for chat completions (SPEC 4.5);
// the edge endpoint makes chat completion requests upstream.
const structuredApplies = (endpoint) => endpoint === 'chat' || endpoint === 'edge';

// buildRequest turns the settings and the conversation into a fetch request.
// Modes: stream (stream: true), json (stream: false) and run-once (stream:
// true plus run_once: true, which llm_meta collapses into one {content,
// meta}), in the body of the chosen protocol: chat messages, a Responses
// input, an Anthropic messages list (with max_tokens and anthropic-version,
// which Anthropic requires), Gemini contents (the model and whether it
// streams are in the path: :generateContent, or :streamGenerateContent with
// alt=sse for the stream and run-once). The edge endpoint takes the JARVIS edge
// function's body and streams with x-stream: true; it has no JSON mode of
// its own (its JSON answer is the run-once one).
function buildRequest(s, history) {
  const base = (s.baseUrl || '').trim().replace(/\/+$/, '');
  const headers = { 'Content-Type': 'application/json' };
  if (s.token) headers.Authorization = 'Bearer ' + s.token;
  const proto = PROTOCOLS[s.endpoint] || PROTOCOLS.chat;
  let path = proto.path;
  let body;
  if (s.endpoint === 'edge') {
    const last = history[history.length - 1];
    body = { message: last ? last.content : '', messages: history, session_id: s.sessionId };
    if (s.model) body.model = s.model;
    if (s.mode === 'stream') headers['x-stream'] = 'true';
  } else {
    const stream = s.mode !== 'json';
    if (s.endpoint === 'responses') {
      body = { model: s.model, input: history, stream };
    } else if (s.endpoint === 'anthropic') {
      headers['anthropic-version'] = '2023-06-01';
      body = { model: s.model, max_tokens: 1024, messages: history, stream };
    } else if (s.endpoint === 'gemini') {
      const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
      path = `/v1beta/models/${encodeURIComponent(s.model || 'gemini-2.5-flash')}:${method}`;
      body = { contents: history.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })) };
    } else {
      body = { model: s.model, messages: history, stream };
    }
    if (s.mode === 'run-once') body.run_once = true;
  }
  if (s.structured && structuredApplies(s.endpoint)) body.enable_structured_output = true;
  return { url: base + path, path, headers, body };
}

// formatUSD writes a cost readably: cents and more with 4 decimals, smaller
// amounts with 3 significant digits, never in exponent notation.
function formatUSD(n) {
  if (n === 0) return '$0';
  const a = Math.abs(n);
  if (a >= 0.01) return '$' + n.toFixed(4).replace(/\.?0+$/, '');
  const digits = Math.min(20, Math.ceil(-Math.log10(a)) + 2);
  return '$' + Number(n.toPrecision(3)).toFixed(digits).replace(/0+$/, '');
}

// usageParts turns meta.usage, meta.cost_usd and meta.timing into the parts
// of the line under a reply, only those present: tokens in (cached) and out,
// cost, time to the first token.
function usageParts(meta) {
  const parts = [];
  const u = isObject(meta.usage) ? meta.usage : {};
  const num = (v) => typeof v === 'number' && Number.isFinite(v);
  const tokens = [];
  if (num(u.input_tokens)) {
    tokens.push(`${fmtNumber(u.input_tokens)} in` + (num(u.cached_input_tokens) ? ` (${fmtNumber(u.cached_input_tokens)} cached)` : ''));
  }
  if (num(u.output_tokens)) tokens.push(`${fmtNumber(u.output_tokens)} out`);
  if (tokens.length) parts.push({ testid: 'usage-tokens', text: 'Tokens: ' + tokens.join(' / ') });
  if (num(meta.cost_usd)) parts.push({ testid: 'usage-cost', text: formatUSD(meta.cost_usd) });
  const first = isObject(meta.timing) ? meta.timing.first_token_ms : undefined;
  if (num(first)) parts.push({ testid: 'usage-ttft', text: `first token ${fmtNumber(first)} ms` });
  return parts;
}

/* ------------------------------------------------------------------ */
/* DOM helpers                                                         */
/* ------------------------------------------------------------------ */

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'testid') el.dataset.testid = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// cellText renders any JSON value as text: strings as they are, null as '',
// objects and arrays as compact JSON (what llm_meta already does upstream).
function cellText(v) {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// Inline Markdown: `code`, **bold**, *italic*, as DOM nodes (never HTML).
function inline(parent, text) {
  const re = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) parent.append(text.slice(last, m.index));
    const t = m[0];
    if (m[1]) parent.append(h('code', { text: t.slice(1, -1) }));
    else if (m[2]) parent.append(h('strong', { text: t.slice(2, -2) }));
    else parent.append(h('em', { text: t.slice(1, -1) }));
    last = m.index + t.length;
  }
  if (last < text.length) parent.append(text.slice(last));
}

// renderMarkdown draws a small, safe subset of Markdown: paragraphs, line
// breaks, bullet and numbered lists, fenced code and inline marks.
function renderMarkdown(el, text) {
  el.replaceChildren();
  const chunks = text.split(/^```[^\n]*\n?/m);
  chunks.forEach((chunk, i) => {
    if (i % 2 === 1) {
      el.append(h('pre', { class: 'code' }, h('code', { text: chunk.replace(/\n$/, '') })));
      return;
    }
    for (const block of chunk.split(/\n{2,}/)) {
      if (!block.trim()) continue;
      const lines = block.split('\n');
      const bullet = lines.every((l) => /^\s*[-*•] /.test(l));
      const numbered = lines.every((l) => /^\s*\d+[.)] /.test(l));
      if (bullet || numbered) {
        const list = h(bullet ? 'ul' : 'ol');
        for (const l of lines) {
          const li = h('li');
          inline(li, l.replace(/^\s*(?:[-*•]|\d+[.)]) /, ''));
          list.append(li);
        }
        el.append(list);
      } else {
        const p = h('p');
        lines.forEach((l, j) => {
          if (j > 0) p.append(h('br'));
          inline(p, l);
        });
        el.append(p);
      }
    }
  });
}

/* ------------------------------------------------------------------ */
/* Rendering meta                                                      */
/* ------------------------------------------------------------------ */

function section(title, testid, ...children) {
  return h('section', { class: 'meta-block', testid, 'aria-label': title },
    h('h3', { text: title }), ...children);
}

function chipList(items, opts = {}) {
  return h('ul', { class: 'chips' + (opts.muted ? ' muted' : ''), testid: opts.testid || null },
    items.map((it) => h('li', { class: 'chip', testid: opts.chipTestid || null }, it)));
}

// structured_result, as JARVIS's StructuredResultView draws it: list → ul,
// table → table with headers, key_value → a definition list, anything else
// (arrays and primitives included) → an expandable block of pretty JSON.
function renderStructuredResult(sr) {
  let body;
  if (isObject(sr) && sr.type === 'list' && Array.isArray(sr.items)) {
    body = h('ul', { class: 'sr-list', testid: 'sr-list' }, sr.items.map((it) => h('li', { text: cellText(it) })));
  } else if (isObject(sr) && sr.type === 'table' && Array.isArray(sr.headers) && Array.isArray(sr.rows)) {
    body = h('div', { class: 'table-wrap' },
      h('table', { class: 'sr-table', testid: 'sr-table' },
        h('thead', {}, h('tr', {}, sr.headers.map((x) => h('th', { scope: 'col', text: cellText(x) })))),
        h('tbody', {}, sr.rows.map((row) => h('tr', {},
          (Array.isArray(row) ? row : [row]).map((c) => h('td', { text: cellText(c) })))))));
  } else if (isObject(sr) && sr.type === 'key_value' && Array.isArray(sr.entries)) {
    body = h('dl', { class: 'sr-kv', testid: 'sr-kv' }, sr.entries.flatMap((e) => [
      h('dt', { text: cellText(isObject(e) ? e.key : '') }),
      h('dd', { text: cellText(isObject(e) ? e.value : e) }),
    ]));
  } else {
    body = h('details', { class: 'json', testid: 'sr-json' },
      h('summary', { text: 'Expand JSON' + (isObject(sr) && typeof sr.type === 'string' ? ` (${sr.type})` : '') }),
      h('pre', { text: JSON.stringify(sr, null, 2) }));
  }
  return section('Structured result', 'structured-result', body);
}

function renderStructuredMetadata(sm) {
  if (!isObject(sm)) {
    return section('Structured metadata', 'structured-metadata',
      h('pre', { class: 'json', text: JSON.stringify(sm, null, 2) }));
  }
  const rows = [];
  const badges = [];
  if (typeof sm.intent === 'string' && sm.intent) {
    badges.push(h('span', { class: 'badge intent', testid: 'sm-intent', text: sm.intent.replace(/_/g, ' ') }));
  }
  if (sm.requires_user_action === true) {
    badges.push(h('span', { class: 'badge warn', testid: 'sm-action', text: 'needs your action' }));
  }
  if (badges.length) rows.push(h('dt', { text: 'Intent' }), h('dd', { class: 'badges' }, badges));
  const entities = Array.isArray(sm.entities) ? sm.entities : [];
  if (entities.length) {
    rows.push(h('dt', { text: 'Entities' }), h('dd', {}, h('ul', { class: 'chips', testid: 'sm-entities' },
      entities.map((e) => h('li', { class: 'chip entity', testid: 'entity-chip' },
        h('span', { class: 'entity-name', text: cellText(isObject(e) ? e.name : e) }),
        isObject(e) && e.type ? h('span', { class: 'entity-type', text: cellText(e.type) }) : null)))));
  }
  const topics = Array.isArray(sm.topics) ? sm.topics : [];
  if (topics.length) {
    rows.push(h('dt', { text: 'Topics' }),
      h('dd', {}, chipList(topics.map(cellText), { testid: 'sm-topics', chipTestid: 'topic-chip', muted: true })));
  }
  if (isObject(sm.scheduling)) {
    const s = sm.scheduling;
    rows.push(h('dt', { text: 'Scheduling' }), h('dd', { testid: 'sm-scheduling' },
      s.detected
        ? h('span', { class: 'badge ok' }, 'detected', s.datetime_mentioned ? ': ' + cellText(s.datetime_mentioned) : '')
        : h('span', { class: 'muted-text', text: 'none detected' })));
  }
  return section('Structured metadata', 'structured-metadata', h('dl', { class: 'props' }, rows));
}

function fmtNumber(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : cellText(n);
}

// meta.hustle: Agent Hustle's reasoning, intent, confidence, tools and cost.
function renderHustle(hu) {
  if (!isObject(hu)) return null;
  const r = isObject(hu.reasoning) ? hu.reasoning : {};
  const ic = isObject(hu.intent_context) && isObject(hu.intent_context.intentContext) ? hu.intent_context.intentContext : {};
  const dev = isObject(hu.dev_tools_info) ? hu.dev_tools_info : {};
  const usage = isObject(hu.token_usage) ? hu.token_usage : isObject(hu.path_info) ? hu.path_info : null;
  const intent = r.activeIntent || ic.activeIntent;

  const stat = (label, testid, cls, ...value) =>
    h('div', { class: 'stat' + (cls ? ' ' + cls : '') }, h('dt', { text: label }), h('dd', { testid }, ...value));
  const stats = [];
  if (intent) stats.push(stat('Intent', 'hustle-intent', 'wide', cellText(intent)));
  if (typeof r.confidence === 'number') {
    stats.push(stat('Confidence', 'hustle-confidence', 'confidence',
      h('meter', { min: '0', max: '1', value: String(r.confidence), 'aria-label': 'Confidence' }),
      h('span', { text: Math.round(r.confidence * 100) + '%' })));
  }
  if (usage && (usage.tokensIn !== undefined || usage.tokensOut !== undefined)) {
    stats.push(stat('Tokens', 'hustle-tokens', '', `${fmtNumber(usage.tokensIn ?? 0)} in / ${fmtNumber(usage.tokensOut ?? 0)} out`));
  }
  if (usage && usage.costUsd !== undefined) stats.push(stat('Cost', 'hustle-cost', 'cost', '$' + cellText(usage.costUsd)));

  const rows = [];
  const cats = Array.isArray(dev.qualifiedCategories) ? dev.qualifiedCategories : Array.isArray(r.categories) ? r.categories : [];
  if (cats.length) rows.push(h('dt', { text: 'Categories' }), h('dd', {}, chipList(cats.map(cellText), { muted: true })));
  if (Array.isArray(r.networks) && r.networks.length) {
    rows.push(h('dt', { text: 'Networks' }), h('dd', {}, chipList(r.networks.map(cellText), { muted: true })));
  }
  if (Array.isArray(dev.availableTools) && dev.availableTools.length) {
    rows.push(h('dt', { text: 'Tools available' }), h('dd', {}, chipList(dev.availableTools.map(cellText), { muted: true })));
  }
  if (Array.isArray(hu.data) && hu.data.length) {
    rows.push(h('dt', { text: 'Other data' }), h('dd', {},
      h('details', { class: 'json' }, h('summary', { text: `${hu.data.length} element(s)` }),
        h('pre', { text: JSON.stringify(hu.data, null, 2) }))));
  }
  const block = section('Agent Hustle', 'hustle-summary');
  if (stats.length) block.append(h('dl', { class: 'stats' }, stats));
  if (r.thinking) block.append(h('blockquote', { class: 'thinking', testid: 'hustle-thinking', text: cellText(r.thinking) }));
  if (rows.length) block.append(h('dl', { class: 'props' }, rows));
  return block;
}

/* ------------------------------------------------------------------ */
/* The page                                                            */
/* ------------------------------------------------------------------ */

const MODEL_HINTS = {
  'demo-openai': 'OpenAI SSE with tool calls; the gateway adds a table in meta. Mention “weather” for two parallel tools.',
  'demo-openrouter': 'As demo-openai, and its usage carries the cost in USD as OpenRouter reports it: llm_meta shows it as meta.cost_usd.',
  'demo-hustle': 'Agent Hustle data stream, converted to OpenAI chunks; reasoning and cost in meta.hustle.',
  'demo-ui': 'AI SDK UI message stream, converted to OpenAI chunks.',
  'demo-structured': 'A JSON reply; turn on structured output (Chat Completions) to get the reply text and meta.structured_metadata.',
  'demo-plain': 'Plain text: no tools, no meta.',
  'demo-cut': 'A stream the upstream ends half-way, as a crashed worker would: llm_meta says it was cut short (meta.interrupted). A message saying “cut short” does the same on any model.',
  'demo-auto': 'A router: answers as demo-openai-fallback, another model than the one asked for (meta.model_served).',
  __custom: 'Any model your gateway knows (run Caddy with LLM_GATEWAY=…).',
};

const ENDPOINT_HINTS = {
  chat: 'Meta is the reply’s top-level meta; in a stream, the final chunk’s.',
  responses: 'Function calls and text as output items; meta is response.meta (in a stream, of response.completed).',
  anthropic: 'tool_use and text blocks; meta is the message’s top-level meta (in a stream, message_stop’s).',
  gemini: 'functionCall and text parts; meta is the reply’s top-level meta (in a stream, the event with the finishReason’s).',
  edge: 'The JARVIS edge function’s endpoint: {content, meta}, streamed with x-stream. JSON mode is its run-once answer.',
};

// toolChip draws one chip of the "Used:" list: the tool's name, and for a
// call with its arguments (meta.tool_calls) the arguments on one line after
// it, in full in the chip's tooltip and, expanded, indented below it; a
// clipped call says so. All of it is text, never HTML.
function toolChip(c) {
  const name = h('span', { class: 'tool-name', testid: 'tool-chip', text: c.name });
  if (c.args === undefined) return h('li', { class: 'chip tool' }, name);
  const short = argsShort(c.args);
  const full = c.args.length > 2000 ? c.args.slice(0, 2000) + '…' : c.args;
  return h('li', { class: 'chip tool with-args' },
    h('details', { class: 'tool-call', testid: 'tool-call' },
      h('summary', { title: `${c.name}(${full}${c.clipped ? '… clipped' : ''})` }, name,
        h('span', { class: 'tool-args-short', testid: 'tool-args-short', text: `(${short}${c.clipped && !short.endsWith('…') ? '…' : ''})` })),
      h('pre', { class: 'tool-args', testid: 'tool-args', text: c.args === '' ? '(no arguments)' : argsPretty(c.args) }),
      c.clipped ? h('p', { class: 'tool-args-clipped', testid: 'tool-args-clipped',
        text: 'Clipped: llm_meta keeps the first 4,096 bytes of a call\u2019s arguments.' }) : null));
}

// AssistantView is one assistant turn: the reply as it streams, then its meta.
class AssistantView {
  constructor(log, req, settings) {
    this.log = log;
    this.text = '';
    this.reasoning = '';
    this.meta = {};
    this.errors = [];
    this.notes = [];
    this.info = { events: 0, nonJSON: 0 };
    this.req = req;
    this.started = performance.now();

    this.replyEl = h('div', { class: 'reply', testid: 'reply-text' });
    this.cursor = h('span', { class: 'cursor', 'aria-hidden': 'true' });
    this.reasoningEl = h('details', { class: 'reasoning', testid: 'reasoning', hidden: true },
      h('summary', { text: 'Reasoning' }), h('p'));
    this.noticesEl = h('div', { class: 'notices' });
    // A reply the upstream cut short (SPEC 11.1): said right under its text.
    this.interruptedEl = h('div', { class: 'notice interrupted', role: 'status', testid: 'interrupted-notice', hidden: true },
      h('strong', { text: 'Cut short. ' }),
      'The upstream ended this reply before it was complete: what you see is only the start of the answer.');
    this.servedEl = h('span', { class: 'served', testid: 'model-served', hidden: true });
    this.metaEl = h('div', { class: 'meta' });
    this.usageEl = h('p', { class: 'usage-line', testid: 'usage-line', hidden: true });
    this.infoEl = h('details', { class: 'info', testid: 'request-info' });
    this.statusEl = h('span', { class: 'status', testid: 'status', text: 'waiting…' });
    this.protocol = PROTOCOLS[settings.endpoint] || PROTOCOLS.chat;
    const label = `${settings.model || '(default model)'} · ${this.protocol.label} · ${settings.mode}`;
    this.el = h('article', { class: 'msg assistant', testid: 'assistant-message', 'data-state': 'pending', 'aria-busy': 'true' },
      h('header', { class: 'msg-head' }, h('span', { class: 'who', text: 'Assistant' }),
        h('span', { class: 'tag', testid: 'message-label', text: label }), this.servedEl, this.statusEl),
      this.reasoningEl, this.replyEl, this.interruptedEl, this.noticesEl, this.metaEl, this.usageEl, this.infoEl);
    log.append(this.el);
    this.renderText();
    this.renderInfo();
  }

  setState(state, status) {
    this.el.dataset.state = state;
    if (status) this.statusEl.textContent = status;
  }

  // follow keeps the conversation scrolled to the bottom while the reply
  // grows, unless the reader has scrolled up.
  follow(fn) {
    const log = this.log;
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    fn();
    if (atBottom) log.scrollTop = log.scrollHeight;
  }

  appendText(t) {
    this.text += t;
    this.follow(() => this.renderText());
  }

  // appendPart adds text of a content part (a Responses item, an Anthropic
  // block): parts after the first start on a new line, as llm_meta joins them.
  appendPart(part, t) {
    if (this.part !== undefined && this.part !== part && this.text !== '') t = '\n' + t;
    this.part = part;
    this.appendText(t);
  }

  appendReasoning(t) {
    this.reasoning += t;
    this.reasoningEl.hidden = false;
    this.reasoningEl.querySelector('p').textContent = this.reasoning;
  }

  renderText() {
    renderMarkdown(this.replyEl, this.text);
    const streaming = this.el && this.el.dataset.state === 'streaming';
    if (streaming || (this.el && this.el.dataset.state === 'pending')) {
      let last = this.replyEl.lastElementChild;
      if (!last) this.replyEl.append((last = h('p')));
      if (last.tagName === 'UL' || last.tagName === 'OL') last = last.lastElementChild || last;
      last.append(this.cursor);
    } else if (this.text.trim() === '' && this.errors.length === 0) {
      this.replyEl.append(h('p', { class: 'muted-text', testid: 'no-text', text: 'No text in the reply.' }));
    }
  }

  addMeta(m) {
    this.meta = mergeMeta(this.meta, m);
    this.follow(() => this.renderMeta());
  }

  addError(msg, where) {
    this.errors.push({ msg, where });
    this.follow(() => this.noticesEl.append(h('div', { class: 'notice error', role: 'alert', testid: 'error-message' },
      h('strong', { text: where ? where + ': ' : 'Error: ' }), msg)));
  }

  // markInterrupted: llm_meta's own event said the stream was cut short,
  // with or without meta (final_meta off).
  markInterrupted() {
    this.cutShort = true;
    this.renderInterrupted();
  }

  // interrupted: the reply was cut short, by its meta or llm_meta's event.
  interrupted() {
    return this.cutShort === true || this.meta.interrupted === true;
  }

  renderInterrupted() {
    this.follow(() => { this.interruptedEl.hidden = !this.interrupted(); });
  }

  addNote(msg) {
    this.notes.push(msg);
    this.noticesEl.append(h('div', { class: 'notice note', testid: 'note', text: msg }));
  }

  renderMeta() {
    const m = this.meta;
    const blocks = [];
    if (typeof m.prompt_trimmed_to === 'number') {
      blocks.push(h('div', { class: 'notice trimmed', role: 'status', testid: 'prompt-trimmed' },
        `Prompt trimmed to ${fmtNumber(m.prompt_trimmed_to)} characters: the oldest messages were left out.`));
    }
    const chips = toolChips(m);
    if (chips.length) {
      blocks.push(h('div', { class: 'used', testid: 'tools-used' }, h('span', { class: 'used-label', text: 'Used:' }),
        h('ul', { class: 'chips', 'aria-label': 'Tools used' }, chips.map(toolChip))));
    }
    if (m.structured_result !== undefined && m.structured_result !== null) blocks.push(renderStructuredResult(m.structured_result));
    if (m.structured_metadata !== undefined && m.structured_metadata !== null) blocks.push(renderStructuredMetadata(m.structured_metadata));
    if (m.hustle !== undefined && m.hustle !== null) blocks.push(renderHustle(m.hustle));
    this.metaEl.replaceChildren(...blocks.filter(Boolean));
    // The model that answered, when it is not the one asked for (SPEC 11.2).
    const served = typeof m.model_served === 'string' ? m.model_served : '';
    this.servedEl.hidden = served === '';
    this.servedEl.replaceChildren(...(served ? ['answered by ', h('code', { text: served })] : []));
    this.renderInterrupted();
    const parts = usageParts(m);
    this.usageEl.hidden = parts.length === 0;
    this.usageEl.replaceChildren(...parts.flatMap((p, i) => [i ? ' · ' : '', h('span', { testid: p.testid, text: p.text })]));
    this.renderInfo();
  }

  renderInfo() {
    const i = this.info;
    const rows = [['Request', `POST ${this.req.url}`]];
    const hdrs = Object.entries(this.req.headers)
      .map(([k, v]) => `${k}: ${k === 'Authorization' ? 'Bearer •••' : v}`).join('\n');
    rows.push(['Headers', hdrs]);
    if (i.status) rows.push(['Response', `${i.status} ${i.statusText || ''} · ${i.contentType || 'no Content-Type'}`]);
    if (i.ms !== undefined) rows.push(['Time', `${i.firstByteMs} ms to headers, ${i.ms} ms in all`]);
    if (i.streamed) rows.push(['Events', `${i.events} event(s)${i.nonJSON ? `, ${i.nonJSON} not JSON` : ''}${i.done ? `, ended by ${this.protocol.terminal}` : ''}`]);
    if (i.finishReason) rows.push(['Finish reason', i.finishReason]);
    if (i.usage) rows.push(['Upstream usage', JSON.stringify(i.usage)]);
    this.infoEl.replaceChildren(
      h('summary', { text: 'Request and raw meta' }),
      h('dl', { class: 'props small' }, rows.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, h('code', { text: v }))])),
      h('p', { class: 'raw-title', text: 'Body sent' }),
      h('pre', { class: 'json', testid: 'request-body', text: JSON.stringify(this.req.body, null, 2) }),
      h('p', { class: 'raw-title', text: 'meta' }),
      h('pre', { class: 'json', testid: 'meta-json', text: Object.keys(this.meta).length ? JSON.stringify(this.meta, null, 2) : '(none)' }));
  }

  finish(state, status) {
    this.info.ms = Math.round(performance.now() - this.started);
    const ms = this.info.ms;
    this.setState(state, `${status} · ${ms < 1000 ? ms + ' ms' : (ms / 1000).toFixed(1) + ' s'}`);
    this.el.setAttribute('aria-busy', 'false');
    this.renderText();
    this.renderInfo();
  }
}

function readSettings(form) {
  const v = (name) => form.elements[name].value;
  const sel = v('model');
  return {
    model: sel === '__custom' ? form.elements['model-custom'].value.trim() : sel,
    endpoint: v('endpoint'),
    mode: v('mode'),
    structured: form.elements.structured.checked,
    baseUrl: v('base-url'),
    token: v('token').trim(),
    sessionId: v('session-id').trim() || 'jarvis-edge',
  };
}

// handleEvent applies one SSE event to the view. The protocol is read from
// the event itself, as llm_meta tells the modes apart: a Responses event
// (type response.*), an Anthropic one (message_start, content_block_*…), a
// Gemini one (candidates or promptFeedback), else a chat chunk. Meta is a
// top-level meta (chat chunks, Anthropic's message_stop, Gemini's terminal
// event) or response.meta (Responses' terminal event).
function handleEvent(view, ev) {
  view.info.events++;
  const data = ev.data;
  if (data === '[DONE]') {
    view.info.done = true;
    return;
  }
  let obj;
  try {
    obj = JSON.parse(data);
  } catch {
    view.info.nonJSON++;
    return;
  }
  if (!isObject(obj)) return;
  if (isInterruptionEvent(obj)) {
    view.markInterrupted();
  } else if (obj.error !== undefined && obj.error !== null) {
    view.addError(errorMessage(obj, data, '', ''), 'Error event in the stream');
  } else if (obj.type === 'error') {
    view.addError(typeof obj.message === 'string' ? obj.message : data, 'Error event in the stream');
  }
  const type = typeof obj.type === 'string' ? obj.type : '';
  if (type.startsWith('response.')) handleResponsesEvent(view, type, obj);
  else if (ANTHROPIC_EVENTS.has(type)) handleAnthropicEvent(view, type, obj);
  else if (isGemini(obj)) handleGeminiEvent(view, obj);
  else handleChatChunk(view, obj);
  if (isObject(obj.meta)) view.addMeta(obj.meta);
}

function handleChatChunk(view, obj) {
  const c0 = Array.isArray(obj.choices) ? obj.choices[0] : null;
  if (isObject(c0)) {
    const d = isObject(c0.delta) ? c0.delta : {};
    if (typeof d.content === 'string' && d.content) view.appendText(d.content);
    if (typeof d.reasoning_content === 'string' && d.reasoning_content) view.appendReasoning(d.reasoning_content);
    if (c0.finish_reason) view.info.finishReason = c0.finish_reason;
  }
  if (isObject(obj.usage)) view.info.usage = obj.usage;
}

const RESPONSES_TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

function handleResponsesEvent(view, type, obj) {
  const resp = isObject(obj.response) ? obj.response : null;
  if (type === 'response.output_text.delta' && typeof obj.delta === 'string') {
    view.appendPart(obj.item_id ?? obj.output_index, obj.delta);
  } else if (type === 'response.reasoning_summary_text.delta' && typeof obj.delta === 'string') {
    view.appendReasoning(obj.delta);
  }
  if (!resp) return;
  if (RESPONSES_TERMINAL.has(type)) {
    view.info.done = true;
    view.info.finishReason = resp.status || type.slice('response.'.length);
    if (isObject(resp.usage)) view.info.usage = resp.usage;
  }
  if (type === 'response.failed') {
    view.addError(isObject(resp.error) && typeof resp.error.message === 'string' ? resp.error.message : 'response.failed',
      'The response failed');
  }
  if (type === 'response.incomplete' && isObject(resp.incomplete_details)) {
    view.addNote(`Incomplete: ${cellText(resp.incomplete_details.reason)}.`);
  }
  if (isObject(resp.meta)) view.addMeta(resp.meta);
}

const ANTHROPIC_EVENTS = new Set(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop',
  'message_delta', 'message_stop', 'ping']);

function handleAnthropicEvent(view, type, obj) {
  const d = isObject(obj.delta) ? obj.delta : {};
  if (type === 'message_start' && isObject(obj.message) && isObject(obj.message.usage)) {
    view.info.usage = Object.assign({}, obj.message.usage);
  } else if (type === 'content_block_delta' && d.type === 'text_delta' && typeof d.text === 'string') {
    view.appendPart(obj.index, d.text);
  } else if (type === 'content_block_delta' && d.type === 'thinking_delta' && typeof d.thinking === 'string') {
    view.appendReasoning(d.thinking);
  } else if (type === 'message_delta') {
    if (d.stop_reason) view.info.finishReason = d.stop_reason;
    if (isObject(obj.usage)) view.info.usage = Object.assign({}, view.info.usage, obj.usage);
  } else if (type === 'message_stop') {
    view.info.done = true;
  }
}

// handleGeminiEvent: candidate 0's text and thoughts, the stream's end at
// the first event whose candidates all have a finishReason (or a blocked
// prompt), its usageMetadata.
function handleGeminiEvent(view, obj) {
  const { text, thought } = geminiParts(obj);
  if (text) view.appendText(text);
  if (thought) view.appendReasoning(thought);
  if (isObject(obj.usageMetadata)) view.info.usage = obj.usageMetadata;
  const cs = Array.isArray(obj.candidates) ? obj.candidates : [];
  if (cs.length && cs.every((c) => isObject(c) && c.finishReason)) {
    view.info.done = true;
    const c0 = geminiCandidate0(obj);
    if (c0) view.info.finishReason = c0.finishReason;
  }
  const blocked = geminiBlocked(obj);
  if (blocked && !cs.length) {
    view.info.done = true;
    view.addError(blocked, 'The prompt was blocked');
  }
}

async function readStream(view, res, signal) {
  view.info.streamed = true;
  view.setState('streaming', 'streaming…');
  view.renderText();
  const parser = new SSEParser((ev) => handleEvent(view, ev));
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const onAbort = () => reader.cancel().catch(() => {});
  signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.push(dec.decode(value, { stream: true }));
    }
    // Cancelling the reader ends the loop like the end of the body would.
    if (signal.aborted) throw new DOMException('The user stopped the reply.', 'AbortError');
    parser.push(dec.decode());
    parser.end();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function initPage() {
  const form = document.getElementById('settings');
  const composer = document.getElementById('composer');
  const input = document.getElementById('message');
  const log = document.getElementById('log');
  const sendBtn = document.getElementById('send');
  const stopBtn = document.getElementById('stop');
  const newBtn = document.getElementById('new-chat');
  const modelSel = document.getElementById('model');
  const modelCustom = document.getElementById('model-custom');
  const hint = document.getElementById('model-hint');
  const preview = form.querySelector('.preview');
  const sessionInput = document.getElementById('session-id');
  const emptyState = log.querySelector('.empty');

  let history = [];
  let controller = null;
  const newSession = () => 'playground-' + Date.now().toString(36);
  sessionInput.value = newSession();

  const endpointHint = document.getElementById('endpoint-hint');
  const jsonMode = form.querySelector('input[name="mode"][value="json"]');
  const structured = document.getElementById('structured');

  function updatePreview() {
    let s = readSettings(form);
    // The edge endpoint's JSON answer is its run-once one; structured mode
    // is for chat completions only.
    jsonMode.disabled = s.endpoint === 'edge';
    if (jsonMode.disabled && jsonMode.checked) form.querySelector('input[name="mode"][value="run-once"]').checked = true;
    structured.disabled = !structuredApplies(s.endpoint);
    s = readSettings(form);
    modelCustom.hidden = modelSel.value !== '__custom';
    hint.textContent = MODEL_HINTS[modelSel.value] || '';
    endpointHint.textContent = ENDPOINT_HINTS[s.endpoint] || '';
    const r = buildRequest(s, [...history, { role: 'user', content: input.value || '…' }]);
    const extra = Object.entries(r.headers).filter(([k]) => k !== 'Content-Type')
      .map(([k, v]) => `${k}: ${k === 'Authorization' ? 'Bearer •••' : v}\n`).join('');
    const list = ['input', 'contents'].find((k) => r.body[k]) || 'messages';
    const body = Object.assign({}, r.body, { [list]: `[${r.body[list].length} message(s)]` });
    preview.textContent = `POST ${r.path}\n${extra}${JSON.stringify(body, null, 2)}`;
  }
  form.addEventListener('input', updatePreview);
  form.addEventListener('change', updatePreview);
  form.addEventListener('submit', (e) => e.preventDefault());
  input.addEventListener('input', updatePreview);
  updatePreview();

  function setBusy(busy) {
    sendBtn.disabled = busy;
    stopBtn.hidden = !busy;
    composer.setAttribute('aria-busy', String(busy));
  }

  async function send(text) {
    const settings = readSettings(form);
    if (modelSel.value === '__custom' && !settings.model) {
      modelCustom.focus();
      return;
    }
    if (emptyState) emptyState.remove();
    history.push({ role: 'user', content: text });
    const userEl = h('article', { class: 'msg user', testid: 'user-message' }, h('p', { text: text }));
    log.append(userEl);
    const req = buildRequest(settings, history.slice());
    const view = new AssistantView(log, req, settings);
    log.scrollTop = log.scrollHeight;
    controller = new AbortController();
    setBusy(true);
    try {
      const res = await fetch(req.url, {
        method: 'POST', headers: req.headers, body: JSON.stringify(req.body), signal: controller.signal,
        cache: 'no-store',
      });
      const ct = res.headers.get('Content-Type') || '';
      Object.assign(view.info, { status: res.status, statusText: res.statusText, contentType: ct,
        firstByteMs: Math.round(performance.now() - view.started) });
      if (!res.ok) {
        const raw = await res.text();
        let obj = null;
        try { obj = JSON.parse(raw); } catch { /* not JSON: the text is the message */ }
        // A run-once reply over a stream cut short is a 502 whose meta says
        // interrupted (SPEC 11.1): shown as the notice, not as an error.
        const cut = isObject(obj) && isObject(obj.meta) && obj.meta.interrupted === true;
        if (!cut) view.addError(errorMessage(obj, raw, res.status, res.statusText), `HTTP ${res.status}`);
        // A failed run-once reply still carries the content so far and meta.
        if (isObject(obj)) {
          if (typeof obj.content === 'string') view.appendText(obj.content);
          if (isObject(obj.meta)) view.addMeta(obj.meta);
        }
        if (cut) view.finish('interrupted', `cut short · HTTP ${res.status}`);
        else view.finish('error', `HTTP ${res.status}`);
      } else if (/text\/event-stream/i.test(ct)) {
        await readStream(view, res, controller.signal);
        // A stream llm_meta says was cut short has its notice instead.
        if (!view.info.done && !view.interrupted()) view.addNote(`The stream ended without ${view.protocol.terminal}.`);
        if (view.errors.length) view.finish('error', 'ended with an error');
        else if (view.interrupted()) view.finish('interrupted', 'cut short');
        else view.finish('done', 'done');
      } else {
        const raw = await res.text();
        let obj = null;
        try { obj = JSON.parse(raw); } catch { /* plain text reply */ }
        if (isObject(obj)) {
          const content = contentOf(obj);
          if (content !== null) view.appendText(content);
          if (isObject(obj.meta)) view.addMeta(obj.meta);
          if (obj.error !== undefined && obj.error !== null) view.addError(errorMessage(obj, raw, res.status, res.statusText), 'Error in the reply');
          if (Array.isArray(obj.choices) && obj.choices[0] && obj.choices[0].finish_reason) view.info.finishReason = obj.choices[0].finish_reason;
          if (obj.object === 'response' && obj.status) view.info.finishReason = obj.status;
          if (obj.type === 'message' && obj.stop_reason) view.info.finishReason = obj.stop_reason;
          if (isObject(obj.usage)) view.info.usage = obj.usage;
          if (isGemini(obj)) {
            const c0 = geminiCandidate0(obj);
            if (c0 && c0.finishReason) view.info.finishReason = c0.finishReason;
            if (isObject(obj.usageMetadata)) view.info.usage = obj.usageMetadata;
            const blocked = geminiBlocked(obj);
            if (blocked && !(obj.candidates || []).length) view.addError(blocked, 'The prompt was blocked');
            const { thought } = geminiParts(obj);
            if (thought) view.appendReasoning(thought);
          }
        } else {
          view.appendText(raw);
        }
        view.finish(view.errors.length ? 'error' : 'done', view.errors.length ? 'error' : 'done');
      }
    } catch (err) {
      if (err && err.name === 'AbortError') {
        view.addNote('Stopped.');
        view.finish('stopped', 'stopped');
      } else {
        view.addError(`${err && err.message ? err.message : err} — is llm_meta reachable at ${req.url}?`, 'Network error');
        view.finish('error', 'network error');
      }
    } finally {
      controller = null;
      setBusy(false);
      if (view.text.trim()) history.push({ role: 'assistant', content: view.text });
      updatePreview();
      view.follow(() => {});
    }
  }

  composer.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || controller) return;
    input.value = '';
    send(text);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      composer.requestSubmit();
    }
  });
  stopBtn.addEventListener('click', () => controller && controller.abort());
  newBtn.addEventListener('click', () => {
    if (controller) controller.abort();
    history = [];
    log.replaceChildren();
    if (emptyState) log.append(emptyState);
    sessionInput.value = newSession();
    updatePreview();
    input.focus();
  });
  log.addEventListener('click', (e) => {
    const b = e.target.closest('.suggestion');
    if (!b) return;
    input.value = b.dataset.text;
    composer.requestSubmit();
  });
}

if (typeof document !== 'undefined') {
  document.addEventListener('DOMContentLoaded', initPage);
}
if (typeof module !== 'undefined' && module.exports) {
  module.exports = { SSEParser, mergeMeta, contentOf, errorMessage, buildRequest, usageParts, formatUSD, handleEvent,
    AssistantView, isInterruptionEvent, toolChips, argsShort, argsPretty };
}
