// End-to-end test of the llm_meta playground (playground/ at the repo root):
// a real Caddy built from this repo runs a copy of Caddyfile.example (free
// loopback ports, admin off), headless Debian Chromium driven by
// playwright-core opens http://127.0.0.1:PORT/playground/ and chats with
// every kind of demo upstream through llm_meta. Screenshots go to
// e2e/screenshots/.
//
//   LLM_META_CADDY=/path/to/caddy node --test playground.test.js
//
// Without LLM_META_CADDY the test builds ./cmd/caddy with `go build`.
// CHROMIUM overrides /usr/bin/chromium; E2E_TIMING=1 prints how long each
// step of a chat took.
//
// Checks of llm_meta's meta for the Responses, Anthropic and Gemini
// protocols and of its usage and cost can be narrowed by environment
// variables, for a build of llm_meta that predates them:
//   E2E_PROTOCOLS=chat,responses,anthropic,gemini  protocols whose replies
//       get meta from llm_meta (tools_used chips, run-once content); default
//       all four. The reply text of every protocol is checked whatever this
//       says.
//   E2E_USAGE=1  llm_meta adds meta.usage and meta.cost_usd: the usage line
//       under demo-openrouter replies must show tokens and the cost; default
//       1, 0 skips the check.
'use strict';

const { test, before, after, describe } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..');
const SHOTS = path.join(__dirname, 'screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TOKEN = 'e2e-secret-token';
const META_PROTOCOLS = (process.env.E2E_PROTOCOLS || 'chat,responses,anthropic,gemini').split(',').map((p) => p.trim()).filter(Boolean);
const USAGE = (process.env.E2E_USAGE || '1') === '1';
for (const p of META_PROTOCOLS) {
  assert.ok(['chat', 'responses', 'anthropic', 'gemini'].includes(p), `E2E_PROTOCOLS: unknown protocol ${p}`);
}

// The page's helpers, loaded as the browser loads them.
const app = require(path.join(REPO, 'playground', 'app.js'));

/* ------------------------------------------------------------------ */
/* The page's pure helpers, without a browser                          */
/* ------------------------------------------------------------------ */

describe('playground helpers', () => {
  const parse = (chunks) => {
    const events = [];
    const p = new app.SSEParser((e) => events.push(e));
    for (const c of chunks) p.push(c);
    p.end();
    return events;
  };

  test('SSE: LF, CRLF and CR line ends, also split across chunks', () => {
    const want = [{ event: 'message', data: 'a' }, { event: 'message', data: 'b' }, { event: 'message', data: 'c' }];
    assert.deepEqual(parse(['data: a\n\ndata: b\r\n\r\ndata: c\r\r']), want);
    assert.deepEqual(parse(['data: a\r', '\n\r', '\ndata: b\r', '\r', 'data: c\n', '\n']), want);
    const whole = 'data: a\r\n\r\ndata: b\n\ndata: c\r\r';
    for (let i = 1; i < whole.length; i++) {
      assert.deepEqual(parse([whole.slice(0, i), whole.slice(i)]), want, `split at ${i}`);
    }
  });

  test('SSE: comments, other fields, multi-line data, BOM, no space, unterminated last event', () => {
    const events = parse(['\ufeff: keepalive\nevent: x\nid: 1\ndata:{"a":1}\ndata: second\n\n', 'data: [DONE]']);
    assert.deepEqual(events, [{ event: 'x', data: '{"a":1}\nsecond' }, { event: 'message', data: '[DONE]' }]);
    assert.deepEqual(parse([': only a comment\n\n\n']), []);
  });

  test('meta merge: tools_used union, prompt_trimmed_to minimum, later wins', () => {
    const m = app.mergeMeta(
      app.mergeMeta({}, { tools_used: ['a', 'b'], prompt_trimmed_to: 90, structured_result: { type: 'list', items: [] } }),
      { tools_used: ['b', 'c', '', 3], prompt_trimmed_to: 120, structured_result: { type: 'table', headers: [], rows: [] } });
    assert.deepEqual(m, { tools_used: ['a', 'b', 'c'], prompt_trimmed_to: 90, structured_result: { type: 'table', headers: [], rows: [] } });
  });

  test('content and error extraction', () => {
    assert.equal(app.contentOf({ content: 'x', meta: {} }), 'x');
    assert.equal(app.contentOf({ object: 'response', output: [
      { type: 'function_call', name: 'f', arguments: '{}' },
      { type: 'message', content: [{ type: 'output_text', text: 'a' }, { type: 'refusal', refusal: 'r' }, { type: 'output_text', text: 'b' }] },
      { type: 'message', content: [{ type: 'output_text', text: 'c' }] }] }), 'ab\nc');
    assert.equal(app.contentOf({ object: 'response', output: [{ type: 'function_call', name: 'f' }] }), null);
    assert.equal(app.contentOf({ type: 'message', content: [{ type: 'tool_use', name: 't', input: {} },
      { type: 'text', text: 'x' }, { type: 'text', text: 'y' }] }), 'x\ny');
    assert.equal(app.errorMessage({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, '', 529, ''), 'Overloaded');
    // Gemini: candidate 0's text parts, not its thoughts, concatenated.
    assert.equal(app.contentOf({ candidates: [
      { index: 1, content: { parts: [{ text: 'other' }] } },
      { content: { role: 'model', parts: [{ text: 'plan', thought: true }, { functionCall: { name: 'f', args: {} } },
        { text: 'a' }, { text: 'b' }] } }] }), 'ab');
    assert.equal(app.contentOf({ promptFeedback: { blockReason: 'SAFETY' } }), null);
    assert.equal(app.contentOf({ choices: [{ message: { content: [{ type: 'text', text: 'a' }, { text: 'b' }] } }] }), 'a\nb');
    assert.equal(app.contentOf({ choices: [{ text: 't' }] }), 't');
    assert.equal(app.errorMessage({ error: 'Unauthorized' }, '', 401, 'Unauthorized'), 'Unauthorized');
    assert.equal(app.errorMessage({ error: { message: 'bad' } }, '', 400, ''), 'bad');
    assert.equal(app.errorMessage(null, '', 502, 'Bad Gateway'), '502 Bad Gateway');
  });

  test('requests: every protocol, streamed, JSON and run-once, and the edge endpoint', () => {
    const hist = [{ role: 'user', content: 'hi' }];
    const s = { model: 'demo-ui', endpoint: 'chat', mode: 'run-once', structured: true, baseUrl: 'http://x/', token: '', sessionId: 's1' };
    let r = app.buildRequest(s, hist);
    assert.equal(r.url, 'http://x/v1/chat/completions');
    assert.deepEqual(r.body, { model: 'demo-ui', messages: hist, stream: true, run_once: true, enable_structured_output: true });
    r = app.buildRequest({ ...s, mode: 'json' }, hist);
    assert.deepEqual(r.body, { model: 'demo-ui', messages: hist, stream: false, enable_structured_output: true });

    // Structured mode is for chat completions: never sent on the other two.
    r = app.buildRequest({ ...s, endpoint: 'responses', mode: 'stream' }, hist);
    assert.equal(r.url, 'http://x/v1/responses');
    assert.deepEqual(r.body, { model: 'demo-ui', input: hist, stream: true });
    r = app.buildRequest({ ...s, endpoint: 'responses' }, hist);
    assert.deepEqual(r.body, { model: 'demo-ui', input: hist, stream: true, run_once: true });
    r = app.buildRequest({ ...s, endpoint: 'anthropic', mode: 'json' }, hist);
    assert.equal(r.url, 'http://x/v1/messages');
    assert.equal(r.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(r.body, { model: 'demo-ui', max_tokens: 1024, messages: hist, stream: false });

    // Gemini: the model and the method are in the path; alt=sse for a stream
    // (run-once too); assistant turns are "model" contents.
    const two = [...hist, { role: 'assistant', content: 'yo' }, { role: 'user', content: 'again' }];
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }, { role: 'model', parts: [{ text: 'yo' }] },
      { role: 'user', parts: [{ text: 'again' }] }];
    r = app.buildRequest({ ...s, endpoint: 'gemini', mode: 'json' }, two);
    assert.equal(r.url, 'http://x/v1beta/models/demo-ui:generateContent');
    assert.deepEqual(r.body, { contents });
    r = app.buildRequest({ ...s, endpoint: 'gemini', mode: 'stream', model: 'a b' }, two);
    assert.equal(r.path, '/v1beta/models/a%20b:streamGenerateContent?alt=sse');
    assert.deepEqual(r.body, { contents });
    r = app.buildRequest({ ...s, endpoint: 'gemini' }, two);
    assert.equal(r.path, '/v1beta/models/demo-ui:streamGenerateContent?alt=sse');
    assert.deepEqual(r.body, { contents, run_once: true });

    r = app.buildRequest({ ...s, endpoint: 'edge', mode: 'stream', structured: false, token: 't' }, hist);
    assert.equal(r.url, 'http://x/functions/v1/jarvis');
    assert.equal(r.headers['x-stream'], 'true');
    assert.equal(r.headers.Authorization, 'Bearer t');
    assert.deepEqual(r.body, { message: 'hi', messages: hist, session_id: 's1', model: 'demo-ui' });
  });

  // A view that records what handleEvent does to it; appendPart is the
  // page's own.
  const recorder = () => ({
    text: '', reasoning: '', meta: {}, errors: [], notes: [], info: { events: 0, nonJSON: 0 },
    appendPart: app.AssistantView.prototype.appendPart,
    appendText(t) { this.text += t; },
    appendReasoning(t) { this.reasoning += t; },
    addMeta(m) { this.meta = app.mergeMeta(this.meta, m); },
    addError(m) { this.errors.push(m); },
    addNote(m) { this.notes.push(m); },
    markInterrupted() { this.cutShort = true; },
  });
  const feed = (events) => {
    const view = recorder();
    for (const e of events) app.handleEvent(view, { event: e.type || 'message', data: typeof e === 'string' ? e : JSON.stringify(e) });
    return view;
  };

  test('stream events: chat chunks, Responses, Anthropic and Gemini events, their meta, parts on new lines, errors', () => {
    let v = feed([{ choices: [{ delta: { content: 'a' } }] }, { choices: [{ delta: { content: 'b' }, finish_reason: 'stop' }] },
      { choices: [], meta: { tools_used: ['t'] } }, '[DONE]']);
    assert.deepEqual([v.text, v.meta, v.info.done, v.info.finishReason], ['ab', { tools_used: ['t'] }, true, 'stop']);

    v = feed([{ type: 'response.created', response: { status: 'in_progress', output: [] } },
      { type: 'response.output_text.delta', item_id: 'm1', delta: 'a' }, { type: 'response.output_text.delta', item_id: 'm1', delta: 'b' },
      { type: 'response.output_text.delta', item_id: 'm2', delta: 'c' },
      { type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 1 }, meta: { tools_used: ['x'] } } }]);
    assert.deepEqual([v.text, v.meta, v.info.done, v.info.finishReason, v.info.usage],
      ['ab\nc', { tools_used: ['x'] }, true, 'completed', { input_tokens: 1 }]);
    v = feed([{ type: 'response.output_text.delta', item_id: 'm1', delta: 'a' },
      { type: 'error', code: 'server_error', message: 'boom' },
      { type: 'response.failed', response: { status: 'failed', error: { message: 'it failed' } } }]);
    assert.deepEqual([v.text, v.errors, v.info.done], ['a', ['boom', 'it failed'], true]);

    v = feed([{ type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1 } } }, { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'b' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
      { type: 'message_stop', meta: { tools_used: ['y'] } }]);
    assert.deepEqual([v.text, v.meta, v.info.done, v.info.finishReason, v.info.usage],
      ['a\nb', { tools_used: ['y'] }, true, 'end_turn', { input_tokens: 5, output_tokens: 9 }]);
    v = feed([{ type: 'message_start', message: {} }, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    assert.deepEqual([v.errors, v.info.done], [['Overloaded'], undefined]);

    // Gemini: text and thoughts of candidate 0; the end is the first event
    // whose every candidate has a finishReason, which carries the meta.
    const gem = (parts, extra) => ({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
      usageMetadata: { promptTokenCount: 3 }, modelVersion: 'gemini-2.5-flash' });
    v = feed([gem([{ text: 'hmm', thought: true }]), gem([{ functionCall: { name: 'f', args: {} } }]), gem([{ text: 'a' }]),
      { ...gem([{ text: 'b' }], { finishReason: 'STOP' }), usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 },
        meta: { tools_used: ['f'] } }]);
    assert.deepEqual([v.text, v.reasoning, v.meta, v.info.done, v.info.finishReason, v.info.usage],
      ['ab', 'hmm', { tools_used: ['f'] }, true, 'STOP', { promptTokenCount: 3, candidatesTokenCount: 2 }]);
    v = feed([{ candidates: [{ index: 0, content: { parts: [{ text: 'a' }] }, finishReason: 'STOP' }, { index: 1, content: { parts: [] } }] }]);
    assert.deepEqual([v.text, v.info.done], ['a', undefined]);
    v = feed([{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } }]);
    assert.deepEqual([v.errors, v.info.done], [['Blocked: PROHIBITED_CONTENT'], true]);
    v = feed([gem([{ text: 'a' }]), { error: { code: 500, message: 'Internal error', status: 'INTERNAL' } }]);
    assert.deepEqual([v.text, v.errors], ['a', ['Internal error']]);
  });

  // SPEC 11.1: the event llm_meta writes at the end of a stream cut short
  // (mark_interrupted), in each protocol, is told from an upstream's error.
  test('a stream cut short: llm_meta\'s own event in each protocol is the notice, an upstream error stays an error', () => {
    const msg = 'The upstream ended the reply before it was complete.';
    const meta = { tools_used: ['t'], interrupted: true };
    const own = [
      { error: { message: msg, type: 'upstream_interrupted', code: null } },
      { type: 'error', code: 'upstream_interrupted', message: msg, param: null, sequence_number: 4, meta },
      { type: 'error', error: { type: 'api_error', message: msg }, meta },
      { type: 'error', error: { type: 'api_error', message: msg } }, // final_meta off: no meta
      { error: { code: 502, message: msg, status: 'UNAVAILABLE' }, meta },
    ];
    for (const e of own) {
      assert.ok(app.isInterruptionEvent(e), JSON.stringify(e));
      const v = feed([{ choices: [{ delta: { content: 'half' } }] }, e]);
      assert.deepEqual([v.text, v.errors, v.cutShort], ['half', [], true], JSON.stringify(e));
    }
    for (const e of [{ error: { message: 'boom', type: 'server_error' } }, { type: 'error', code: 'server_error', message: 'boom' },
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { error: { code: 500, message: 'x', status: 'INTERNAL' } },
      { choices: [], meta }]) {
      assert.ok(!app.isInterruptionEvent(e), JSON.stringify(e));
    }
  });

  // SPEC 11.3: one chip per call, then the names no call names; arguments
  // on one line for the chip, in full when expanded.
  test('tool chips: calls with their arguments, short and in full', () => {
    assert.deepEqual(app.toolChips({ tools_used: ['a', 'b'] }), [{ name: 'a' }, { name: 'b' }]);
    assert.deepEqual(app.toolChips({ tools_used: ['get_weather', 'web_search'], tool_calls: [
      { name: 'get_weather', arguments: '{"city":"Paris"}' }, { name: 'get_weather', arguments: '{"city":"Oslo"', clipped: true },
      { arguments: '{}' }, 'x'] }), [
      { name: 'get_weather', args: '{"city":"Paris"}', clipped: false },
      { name: 'get_weather', args: '{"city":"Oslo"', clipped: true },
      { name: 'web_search' }]);
    assert.equal(app.argsShort('{"city":"Paris","unit":"celsius"}'), 'city: Paris, unit: celsius');
    assert.equal(app.argsShort('{ "q": "a\\nb", "n": 3, "o": {"x": [1]} }'), 'q: a b, n: 3, o: {"x":[1]}');
    assert.equal(app.argsShort('["a", 1]'), '["a",1]');
    assert.equal(app.argsShort(''), '');
    assert.equal(app.argsShort('{"text":"' + 'é'.repeat(100) + '"}'), 'text: ' + 'é'.repeat(53) + '…');
    assert.equal(app.argsShort('{"broken": "clip'), '{"broken": "clip');
    assert.equal(app.argsPretty('{"city":"Paris"}'), '{\n  "city": "Paris"\n}');
    assert.equal(app.argsPretty('{"broken'), '{"broken');
  });

  test('usage line: only the parts present, costs never in exponent notation', () => {
    const line = (m) => app.usageParts(m).map((p) => `${p.testid}=${p.text}`);
    assert.deepEqual(line({}), []);
    assert.deepEqual(line({ usage: {}, timing: {} }), []);
    assert.deepEqual(line({ usage: { input_tokens: 1200, output_tokens: 45, cached_input_tokens: 1000 }, cost_usd: 0.0123,
      timing: { first_token_ms: 85, total_ms: 900 } }),
    ['usage-tokens=Tokens: 1,200 in (1,000 cached) / 45 out', 'usage-cost=$0.0123', 'usage-ttft=first token 85 ms']);
    assert.deepEqual(line({ usage: { input_tokens: 3, output_tokens: 0, cached_input_tokens: 0 } }),
      ['usage-tokens=Tokens: 3 in (0 cached) / 0 out']);
    assert.deepEqual(line({ usage: { output_tokens: 7 }, cost_usd: 0 }), ['usage-tokens=Tokens: 7 out', 'usage-cost=$0']);
    assert.deepEqual(line({ cost_usd: '1', timing: { first_token_ms: 0 } }), ['usage-ttft=first token 0 ms']);
    assert.equal(app.formatUSD(0.00002205), '$0.0000221');
    assert.equal(app.formatUSD(7.5e-7), '$0.00000075');
    assert.equal(app.formatUSD(1.5), '$1.5');
    assert.equal(app.formatUSD(0.25), '$0.25');
  });
});

/* ------------------------------------------------------------------ */
/* Setup: Caddy with a copy of Caddyfile.example, a fake gateway, Chromium */
/* ------------------------------------------------------------------ */

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, opts, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

// caddyfileFor rewrites Caddyfile.example for the test: its three ports
// replaced by free ones, the admin endpoint off and every site bound to
// loopback. Nothing else changes.
function caddyfileFor(src, ports) {
  let cf = src.replace(/:808([012])\b/g, (_, d) => ':' + ports[Number(d)]);
  const opts = '$1admin off\n$1default_bind 127.0.0.1';
  if (/^([ \t]*)admin\b.*$/m.test(cf)) cf = cf.replace(/^([ \t]*)admin\b.*$/m, opts);
  else cf = cf.replace(/^\{[ \t]*$/m, '{\n' + opts.replace(/\$1/g, '\t'));
  assert.match(cf, /admin off/, 'could not turn the admin endpoint off in the Caddyfile copy');
  assert.doesNotMatch(cf, /:808[012]\b/, 'a port of Caddyfile.example was left in the copy');
  return cf;
}

// fakeMeta is the meta the fake gateway's "fake-meta" replies carry where
// llm_meta puts meta in each protocol, equal to what llm_meta derives from
// those replies itself (their one tool, their usage and cost; timing is off
// on the site in front of the fake): the page's reading of every protocol's
// meta is checked whether or not llm_meta already adds it.
const fakeMeta = {
  tools_used: ['lookup'],
  usage: { input_tokens: 1200, output_tokens: 345, total_tokens: 1545, cached_input_tokens: 1000 },
  cost_usd: 0.0123,
  timing: { first_token_ms: 42, total_ms: 50 },
};
const FAKE_TEXT = 'Fake gateway here.';

// fakeProtocolReply answers "fake-meta" on each protocol's path: a reply
// with one tool call ("lookup"), FAKE_TEXT in two pieces and fakeMeta.
function fakeProtocolReply(path, stream, res) {
  const u = fakeMeta.usage;
  const sse = (events) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.end(events.map((e) => (e.type ? `event: ${e.type}\n` : '') + `data: ${JSON.stringify(e)}\n\n`).join(''));
  };
  if (path.includes(':')) {
    return fakeGeminiReply(path, res);
  }
  if (path.endsWith('/responses')) {
    const usage = { input_tokens: u.input_tokens, input_tokens_details: { cached_tokens: u.cached_input_tokens },
      output_tokens: u.output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: u.total_tokens,
      cost: fakeMeta.cost_usd };
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{}', status: 'completed' };
    const msg = { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed',
      content: [{ type: 'output_text', text: FAKE_TEXT, annotations: [] }] };
    const resp = { id: 'resp_fake', object: 'response', created_at: 1767225600, status: 'completed', model: 'fake-meta',
      output: [call, msg], usage, meta: fakeMeta };
    if (!stream) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(resp));
    }
    const { meta: _, ...started } = resp;
    return sse([
      { type: 'response.created', response: { ...started, status: 'in_progress', output: [], usage: null } },
      { type: 'response.output_item.added', output_index: 0, item: call },
      { type: 'response.output_item.done', output_index: 0, item: call },
      { type: 'response.output_item.added', output_index: 1, item: { ...msg, status: 'in_progress', content: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Fake gateway ' },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'here.' },
      { type: 'response.output_item.done', output_index: 1, item: msg },
      { type: 'response.completed', response: resp },
    ].map((e, i) => ({ type: e.type, sequence_number: i, ...e })));
  }
  const usage = { input_tokens: u.input_tokens - u.cached_input_tokens, cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cached_input_tokens, output_tokens: u.output_tokens };
  const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: 'fake-meta', stop_sequence: null };
  if (!stream) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ ...message, content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} },
      { type: 'text', text: FAKE_TEXT }], stop_reason: 'end_turn', usage: { ...usage, cost: fakeMeta.cost_usd }, meta: fakeMeta }));
  }
  return sse([
    { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Fake gateway ' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'here.' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.output_tokens, cost: fakeMeta.cost_usd } },
    { type: 'message_stop', meta: fakeMeta },
  ]);
}

// fakeGeminiReply is the Gemini reply of "fake-meta": a JSON reply, or with
// :streamGenerateContent its stream (CRLF framing as Google's), the meta in
// the event with the finishReason.
function fakeGeminiReply(path, res) {
  const u = fakeMeta.usage;
  const reply = (parts, finishReason, usageMetadata) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    usageMetadata, modelVersion: 'fake-meta', responseId: 'fake-gemini' });
  const prompt = { promptTokenCount: u.input_tokens, totalTokenCount: u.input_tokens, cachedContentTokenCount: u.cached_input_tokens };
  const usage = { ...prompt, candidatesTokenCount: u.output_tokens, totalTokenCount: u.total_tokens };
  const call = { functionCall: { name: 'lookup', args: {} } };
  if (!path.includes(':streamGenerateContent')) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ ...reply([call, { text: FAKE_TEXT }], 'STOP', usage), meta: fakeMeta }));
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  res.end([reply([call], null, prompt), reply([{ text: 'Fake gateway ' }], null, prompt),
    { ...reply([{ text: 'here.' }], 'STOP', usage), meta: fakeMeta }].map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join(''));
}

// FAKE_HTML and FAKE_LONG are the arguments of the "fake-args" reply's
// calls: markup that must show as text, and arguments longer than the
// 4,096 bytes llm_meta keeps (SPEC 11.3), of two-byte characters, so that
// the clip falls inside one unless cut at a character boundary.
const FAKE_HTML = JSON.stringify({ html: '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>' });
const FAKE_LONG = JSON.stringify({ path: 'notes.txt', text: 'é'.repeat(3000) });

// fakeArgsReply is a chat completion with the calls of FAKE_HTML and
// FAKE_LONG.
function fakeArgsReply() {
  const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: args } });
  return { id: 'chatcmpl-args', object: 'chat.completion', created: 1767225600, model: 'fake-args',
    choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: FAKE_TEXT,
      tool_calls: [call('c1', 'render_html', FAKE_HTML), call('c2', 'write_file', FAKE_LONG)] } }] };
}

// fakeGateway stands behind the :8082 site (JARVIS_GATEWAY_URL) to produce
// the errors the demo gateway never makes: an HTTP error and an error part in
// an Agent Hustle data stream; and, for model "fake-meta", replies of each
// protocol that carry meta where llm_meta puts it; for "fake-args", tool
// calls whose arguments are markup and too long to keep whole. Any other
// model gets a JSON completion.
function fakeGateway() {
  return http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let parsed = {};
      try { parsed = JSON.parse(body) || {}; } catch { /* not JSON */ }
      // Gemini's model is in the path.
      const gemini = /\/models\/([^/:]+):/.exec(req.url);
      const model = gemini ? decodeURIComponent(gemini[1]) : parsed.model || '';
      if (model === 'fake-meta' && (gemini || /\/(responses|messages)$/.test(req.url))) {
        fakeProtocolReply(req.url, parsed.stream === true, res);
      } else if (model === 'fake-args') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(fakeArgsReply()));
      } else if (model === 'fail-http') {
        res.writeHead(503, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'fake gateway: model overloaded', type: 'server_error' } }));
      } else if (model === 'fail-stream') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Vercel-AI-Data-Stream': 'v1' });
        res.end('f:{"messageId":"msg-fail"}\n0:"Looking that up... "\n3:"fake gateway: the tool crashed"\n');
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const reply = {
          id: 'chatcmpl-fake', object: 'chat.completion', created: 1767225600, model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: FAKE_TEXT,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] } }],
        };
        // "fake-meta" on chat: its usage and cost as the top-level meta.
        if (model === 'fake-meta') reply.meta = fakeMeta;
        res.end(JSON.stringify(reply));
      }
    });
  });
}

// fakeSite is a site added to the test's Caddyfile: llm_meta with its
// defaults and tool_arguments in front of the fake gateway, open to the page by CORS (any
// header: Anthropic requests carry anthropic-version, which the example's
// edge site, a stand-in for the JARVIS function, does not allow).
function fakeSite(port, fakeURL) {
  return `
:${port} {
	header Access-Control-Allow-Origin "*"
	header Access-Control-Allow-Headers "*"
	route {
		@preflight method OPTIONS
		respond @preflight 204
		@health method GET
		respond @health "ok" 200
		llm_meta {
			tool_arguments on
		}
		reverse_proxy ${fakeURL}
	}
}
`;
}

async function waitForHTTP(url, caddy, ms) {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    if (caddy.exitCode !== null) throw new Error(`caddy exited with ${caddy.exitCode}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err.message;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${url} not ready after ${ms} ms (${last})`);
}

const env = {};

async function setUp() {
  fs.mkdirSync(SHOTS, { recursive: true });
  env.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-meta-e2e-'));

  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: run e2e/run.sh, or apt-get install chromium`);

  let bin = process.env.LLM_META_CADDY;
  if (!bin) {
    bin = path.join(env.tmp, 'caddy');
    await run('go', ['build', '-o', bin, './cmd/caddy'], { cwd: REPO, timeout: 600_000 });
  }

  env.fake = fakeGateway();
  await new Promise((r) => env.fake.listen(0, '127.0.0.1', r));
  const fakeURL = `http://127.0.0.1:${env.fake.address().port}`;

  env.ports = [await freePort(), await freePort(), await freePort()];
  env.fakeSitePort = await freePort();
  const cfPath = path.join(env.tmp, 'Caddyfile');
  fs.writeFileSync(cfPath, caddyfileFor(fs.readFileSync(path.join(REPO, 'Caddyfile.example'), 'utf8'), env.ports) +
    fakeSite(env.fakeSitePort, fakeURL));

  const caddyEnv = { ...process.env };
  for (const k of Object.keys(caddyEnv)) {
    if (/^(LLM_GATEWAY|JARVIS_|CLAWDBOT_|CADDY)/.test(k)) delete caddyEnv[k];
  }
  Object.assign(caddyEnv, {
    XDG_DATA_HOME: path.join(env.tmp, 'data'),
    XDG_CONFIG_HOME: path.join(env.tmp, 'config'),
    JARVIS_GATEWAY_URL: fakeURL,
    JARVIS_AUTH_TOKEN: TOKEN,
  });
  env.caddyLog = path.join(env.tmp, 'caddy.log');
  const logFd = fs.openSync(env.caddyLog, 'w');
  env.caddy = spawn(bin, ['run', '--config', cfPath, '--adapter', 'caddyfile'],
    { cwd: REPO, env: caddyEnv, stdio: ['ignore', logFd, logFd] });
  fs.closeSync(logFd);
  process.on('exit', () => env.caddy && env.caddy.exitCode === null && env.caddy.kill('SIGKILL'));

  env.base = `http://127.0.0.1:${env.ports[0]}`;
  env.edgeSite = `http://127.0.0.1:${env.ports[2]}`;
  env.fakeSite = `http://127.0.0.1:${env.fakeSitePort}`;
  try {
    await waitForHTTP(`${env.base}/playground/`, env.caddy, 30_000);
    await waitForHTTP(`${env.edgeSite}/`, env.caddy, 10_000);
    await waitForHTTP(`${env.fakeSite}/`, env.caddy, 10_000);
  } catch (err) {
    throw new Error(`${err.message}\n--- caddy log ---\n${fs.readFileSync(env.caddyLog, 'utf8').slice(-4000)}`);
  }

  const { chromium } = require('playwright-core');
  env.context = await chromium.launchPersistentContext(path.join(env.tmp, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
    timeout: 60_000,
  });
  env.context.setDefaultTimeout(20_000);
  env.page = env.context.pages()[0] || (await env.context.newPage());
  env.pageErrors = [];
  env.page.on('pageerror', (err) => env.pageErrors.push(err.message));
  await env.page.goto(`${env.base}/playground/`, { waitUntil: 'load' });
}

async function tearDown() {
  if (env.context) await env.context.close().catch(() => {});
  if (env.caddy && env.caddy.exitCode === null) {
    const exited = new Promise((r) => env.caddy.once('exit', r));
    env.caddy.kill('SIGTERM');
    const t = setTimeout(() => env.caddy.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
  if (env.fake) await new Promise((r) => env.fake.close(r));
  if (env.tmp) fs.rmSync(env.tmp, { recursive: true, force: true });
}

/* ------------------------------------------------------------------ */
/* Chatting through the page                                           */
/* ------------------------------------------------------------------ */

// ask sets the request options, sends text and waits for the reply to end.
// It returns the locator of the new assistant message.
async function ask(text, o = {}) {
  const page = env.page;
  const t0 = Date.now();
  const lap = (what) => process.env.E2E_TIMING && console.log(`  ${what}: ${Date.now() - t0} ms`);
  const opts = { model: 'demo-openai', endpoint: 'chat', mode: 'stream', structured: false,
    baseUrl: '', token: '', newChat: true, ...o };
  if (opts.newChat) await page.getByTestId('new-chat').click();
  const known = ['demo-openai', 'demo-openrouter', 'demo-hustle', 'demo-ui', 'demo-structured', 'demo-plain', 'demo-cut', 'demo-auto'];
  if (known.includes(opts.model)) {
    await page.getByLabel('Model', { exact: true }).selectOption(opts.model);
  } else {
    await page.getByLabel('Model', { exact: true }).selectOption('__custom');
    await page.getByLabel('Model name').fill(opts.model);
  }
  await page.getByTestId('endpoint-' + opts.endpoint).check();
  await page.getByTestId('mode-' + opts.mode).check({ force: true });
  const structured = page.getByTestId('structured-toggle');
  if (await structured.isEnabled()) await structured.setChecked(opts.structured);
  else assert.ok(!opts.structured, `structured output does not apply to ${opts.endpoint}`);
  if (opts.baseUrl || opts.token || await page.getByTestId('base-url').isVisible()) {
    const adv = page.locator('details.advanced');
    if (!(await adv.evaluate((d) => d.open))) await adv.locator('summary').click();
    await page.getByLabel('Base URL').fill(opts.baseUrl);
    await page.getByLabel('Bearer token').fill(opts.token);
  }
  lap('settings');
  const before = await page.getByTestId('assistant-message').count();
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByTestId('send-button').click();
  lap('sent');
  const msg = page.getByTestId('assistant-message').nth(before);
  await msg.waitFor();
  lap('message shown');
  await page.waitForFunction((i) => {
    const m = document.querySelectorAll('[data-testid="assistant-message"]')[i];
    return m && !['pending', 'streaming'].includes(m.dataset.state);
  }, before, { timeout: 30_000 });
  lap('reply done');
  return msg;
}

async function shot(name) {
  const file = path.join(SHOTS, name + '.png');
  await env.page.screenshot({ path: file, fullPage: true });
  return file;
}

const texts = (loc) => loc.allTextContents().then((a) => a.map((s) => s.trim()));

async function tableOf(msg) {
  const table = msg.getByTestId('sr-table');
  return { headers: await texts(table.locator('th')), cells: await texts(table.locator('td')) };
}

// metaOf reads the meta the page shows in a message's raw meta block.
async function metaOf(msg) {
  const raw = await msg.getByTestId('meta-json').textContent();
  return raw === '(none)' ? {} : JSON.parse(raw);
}

// usageLineOf reads the line under a reply: each part by its test id, and
// whether the line shows at all.
async function usageLineOf(msg) {
  const line = msg.getByTestId('usage-line');
  const out = { visible: await line.isVisible() };
  for (const id of ['usage-tokens', 'usage-cost', 'usage-ttft']) {
    if (await line.getByTestId(id).count()) out[id] = await line.getByTestId(id).textContent();
  }
  return out;
}

// assertUsageLineShowsMeta checks that the line under a reply shows exactly
// the parts of its meta that are present (none: no line).
async function assertUsageLineShowsMeta(msg, what) {
  const want = { visible: false };
  for (const p of app.usageParts(await metaOf(msg))) {
    want.visible = true;
    want[p.testid] = p.text;
  }
  assert.deepEqual(await usageLineOf(msg), want, what);
  return want;
}

async function kvOf(msg) {
  const kv = msg.getByTestId('sr-kv');
  const keys = await texts(kv.locator('dt'));
  const values = await texts(kv.locator('dd'));
  return Object.fromEntries(keys.map((k, i) => [k, values[i]]));
}

describe('playground in Chromium through llm_meta', { timeout: 300_000 }, () => {
  before(setUp, { timeout: 660_000 });
  after(tearDown, { timeout: 30_000 });

  test('page loads with its controls', async () => {
    const page = env.page;
    assert.equal(await page.title(), 'llm_meta playground');
    assert.ok(await page.getByTestId('model-select').isVisible());
    assert.ok(await page.getByTestId('send-button').isEnabled());
  });

  test('demo-openai, stream: text streams in, then chips and the gateway table', async () => {
    const page = env.page;
    const p = ask('Weather in Paris?');
    // The reply arrives in pieces: catch it while it is still streaming.
    const partial = await page.waitForFunction(() => {
      const m = document.querySelector('[data-testid="assistant-message"][data-state="streaming"]');
      const t = m && m.querySelector('[data-testid="reply-text"]').textContent;
      return t && t.length > 0 ? t : null;
    }, null, { timeout: 10_000 }).then((h) => h.jsonValue());
    const msg = await p;
    assert.equal(await msg.getAttribute('data-state'), 'done');
    const text = await msg.getByTestId('reply-text').textContent();
    assert.match(text, /You said: "Weather in Paris\?"\. I asked get_weather and get_forecast in parallel: Paris is 21°C/);
    assert.ok(partial.length < text.length && text.startsWith(partial), `seen while streaming: ${JSON.stringify(partial)}`);
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['get_weather', 'get_forecast']);
    assert.match(await msg.getByTestId('tools-used').textContent(), /^Used:/);
    assert.deepEqual(await tableOf(msg), { headers: ['Tool', 'Status'], cells: ['get_weather', 'ok', 'get_forecast', 'ok'] });
    assert.equal(await msg.getByTestId('error-message').count(), 0);
    await shot('01-demo-openai-stream');
  });

  test('demo-hustle, stream: converted data stream, key_value summary and Hustle card', async () => {
    const msg = await ask('SOL price?', { model: 'demo-hustle' });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.match(await msg.getByTestId('reply-text').textContent(),
      /You said: "SOL price\?"\. Agent Hustle \(demo\) looked up SOL with getTokenPrice: 142\.07 USD/);
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['getTokenPrice']);
    const kv = await kvOf(msg);
    assert.equal(kv.Intent, 'Looking up the SOL token price');
    assert.equal(kv.Confidence, '0.92');
    assert.match(kv.Cost, /^\$0\.\d+$/);
    assert.match(kv.Tokens, /^\d+ in \/ \d+ out$/);
    const hustle = msg.getByTestId('hustle-summary');
    assert.equal(await hustle.getByTestId('hustle-intent').textContent(), 'Looking up the SOL token price');
    assert.equal((await hustle.getByTestId('hustle-confidence').textContent()).trim(), '92%');
    assert.match(await hustle.getByTestId('hustle-thinking').textContent(), /market-data category/);
    assert.equal(await hustle.getByTestId('hustle-cost').textContent(), kv.Cost);
    await shot('02-demo-hustle-stream');
  });

  test('demo-ui, stream: converted UI message stream', async () => {
    const msg = await ask('Open my terminal', { model: 'demo-ui' });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.match(await msg.getByTestId('reply-text').textContent(),
      /You said: "Open my terminal"\. I ran the launcher tool, which opened a terminal\./);
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['launcher']);
    const kv = await kvOf(msg);
    assert.equal(kv.Categories, 'required, demo');
    assert.equal(kv['Available tools'], '1');
    await shot('03-demo-ui-stream');
  });

  test('demo-openai, run-once: one JSON answer with the same meta', async () => {
    const msg = await ask('Open my terminal', { mode: 'run-once' });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.match(await msg.getByTestId('reply-text').textContent(), /I ran the launcher tool/);
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['launcher']);
    assert.deepEqual(await tableOf(msg), { headers: ['Tool', 'Status'], cells: ['launcher', 'ok'] });
    // Run-once answers JSON, not a stream.
    await msg.getByTestId('request-info').locator('summary').click();
    assert.match(await msg.getByTestId('request-info').textContent(), /200 OK · application\/json/);
    assert.match(await msg.getByTestId('request-body').textContent(), /"run_once": true/);
    await shot('04-demo-openai-run-once');
  });

  test('demo-structured with structured output: reply text, never the JSON, and structured_metadata', async () => {
    const msg = await ask('Can we meet Acme Corp next Tuesday?', { model: 'demo-structured', structured: true });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    const text = await msg.getByTestId('reply-text').textContent();
    assert.match(text, /You said: "Can we meet Acme Corp next Tuesday\?"/);
    assert.doesNotMatch(text, /"reply"|\{"/);
    // The Markdown of the reply is rendered: a bold label and a list.
    assert.equal(await msg.getByTestId('reply-text').locator('strong').first().textContent(), 'You said:');
    assert.equal(await msg.getByTestId('reply-text').locator('li').count(), 3);
    const sm = msg.getByTestId('structured-metadata');
    assert.equal(await sm.getByTestId('sm-intent').textContent(), 'question');
    assert.deepEqual(await texts(sm.getByTestId('entity-chip')), ['llm_metatool', 'Caddytechnology']);
    assert.deepEqual(await texts(sm.locator('.entity-type')), ['tool', 'technology']);
    assert.deepEqual(await texts(sm.getByTestId('topic-chip')), ['demo', 'structured output', 'scheduling']);
    assert.match(await sm.getByTestId('sm-scheduling').textContent(), /detected: tuesday/);
    await shot('05-demo-structured');
  });

  test('edge endpoint: stream (x-stream) and run-once, multi-turn', async () => {
    let msg = await ask('Weather in Paris?', { endpoint: 'edge' });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.match(await msg.getByTestId('reply-text').textContent(), /get_weather and get_forecast/);
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['get_weather', 'get_forecast']);
    msg = await ask('And SOL?', { endpoint: 'edge', mode: 'run-once', model: 'demo-hustle', newChat: false });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.match(await msg.getByTestId('reply-text').textContent(), /You said: "And SOL\?"\. Agent Hustle/);
    assert.equal((await kvOf(msg)).Intent, 'Looking up the SOL token price');
    await msg.getByTestId('request-info').locator('summary').click();
    const body = JSON.parse(await msg.getByTestId('request-body').textContent());
    assert.equal(body.message, 'And SOL?');
    assert.equal(body.messages.length, 3, 'the history goes with the second turn');
    assert.match(body.session_id, /^playground-/);
    await shot('06-edge');
  });

  // Every protocol, streamed and not, through llm_meta to the demo gateway.
  // The text always shows; the chips (meta.tools_used) and run-once are
  // checked for the protocols llm_meta gives meta to (E2E_PROTOCOLS).
  test(`protocol picker: Chat Completions, Responses, Anthropic Messages, Gemini; meta checked for ${META_PROTOCOLS}`, async () => {
    const page = env.page;
    const labels = { chat: 'Chat Completions', responses: 'Responses', anthropic: 'Anthropic Messages', gemini: 'Gemini' };
    const paths = { chat: () => '/v1/chat/completions', responses: () => '/v1/responses', anthropic: () => '/v1/messages',
      gemini: (mode) => `/v1beta/models/demo-openai:${mode === 'json' ? 'generateContent' : 'streamGenerateContent?alt=sse'}` };
    for (const endpoint of ['chat', 'responses', 'anthropic', 'gemini']) {
      const withMeta = META_PROTOCOLS.includes(endpoint);
      for (const mode of withMeta ? ['stream', 'json', 'run-once'] : ['stream', 'json']) {
        const what = `${endpoint}, ${mode}`;
        const p = ask('Weather in Paris?', { endpoint, mode });
        let partial = null;
        if (mode === 'stream') {
          partial = await page.waitForFunction(() => {
            const m = document.querySelector('[data-testid="assistant-message"][data-state="streaming"]');
            const t = m && m.querySelector('[data-testid="reply-text"]').textContent;
            return t && t.length > 0 ? t : null;
          }, null, { timeout: 10_000 }).then((h) => h.jsonValue());
        }
        const msg = await p;
        assert.equal(await msg.getAttribute('data-state'), 'done', what);
        const text = await msg.getByTestId('reply-text').textContent();
        assert.match(text, /^You said: "Weather in Paris\?"\. I asked get_weather and get_forecast in parallel: Paris is 21°C and sunny/, what);
        if (partial !== null) {
          assert.ok(partial.length < text.length && text.startsWith(partial), `${what}: seen while streaming: ${JSON.stringify(partial)}`);
        }
        assert.equal(await msg.getByTestId('message-label').textContent(), `demo-openai · ${labels[endpoint]} · ${mode}`);
        assert.equal(await msg.getByTestId('error-message').count(), 0, what);
        assert.equal(await msg.getByTestId('note').count(), 0, `${what}: the stream ended with its protocol's last event`);
        assert.ok(!(await msg.getByTestId('model-served').isVisible()), `${what}: demo-openai answered as asked`);
        assert.ok(!(await msg.getByTestId('interrupted-notice').isVisible()), `${what}: whole`);

        await msg.getByTestId('request-info').locator('summary').click();
        const info = await msg.getByTestId('request-info').textContent();
        assert.ok(info.includes(`POST ${paths[endpoint](mode)}Headers`), `${what}: ${info}`);
        assert.match(info, mode === 'stream' ? /200 OK · text\/event-stream/ : /200 OK · application\/json/, what);
        const body = JSON.parse(await msg.getByTestId('request-body').textContent());
        // Gemini says whether it streams in the path, checked above.
        assert.equal(body.stream, endpoint === 'gemini' ? undefined : mode !== 'json', what);
        assert.equal(body.run_once, mode === 'run-once' ? true : undefined, what);

        if (withMeta) assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['get_weather', 'get_forecast'], what);
        await assertUsageLineShowsMeta(msg, what);
        if (endpoint === 'responses' && mode === 'stream') {
          await msg.getByTestId('request-info').locator('summary').click();
          await shot('08-responses-stream');
        }
        if (endpoint === 'gemini' && mode === 'stream') await shot('08-gemini-stream');
      }
    }
  });

  // The fake gateway's "fake-meta" replies carry meta where llm_meta puts it
  // in each protocol, and the same meta llm_meta derives from them: the page
  // must find it in all of them and draw the chips and the usage line.
  test('each protocol\'s meta is read where llm_meta puts it: chips and the usage line', async () => {
    await env.page.getByTestId('new-chat').click();
    const fake = { baseUrl: env.fakeSite, token: '', model: 'fake-meta', newChat: false };
    for (const [endpoint, mode] of [['chat', 'json'], ['responses', 'stream'], ['responses', 'json'],
      ['anthropic', 'stream'], ['anthropic', 'json'], ['gemini', 'stream'], ['gemini', 'json']]) {
      const what = `${endpoint}, ${mode}`;
      const msg = await ask('hello', { ...fake, endpoint, mode });
      assert.equal(await msg.getAttribute('data-state'), 'done', `${what}: ${await texts(msg.getByTestId('error-message'))}`);
      assert.equal((await msg.getByTestId('reply-text').textContent()).trim(), FAKE_TEXT, what);
      assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['lookup'], what);
      const line = await assertUsageLineShowsMeta(msg, what);
      assert.equal(line['usage-tokens'], 'Tokens: 1,200 in (1,000 cached) / 345 out', what);
      assert.equal(line['usage-cost'], '$0.0123', what);
      assert.equal(line['usage-ttft'], 'first token 42 ms', what);
    }
    await shot('09-protocol-meta');
  });

  // With llm_meta's usage and cost (E2E_USAGE=1): demo-openrouter reports
  // usage.cost, and the second turn of a conversation has cached tokens.
  // Gemini's usageMetadata has no cost (OpenRouter does not speak Gemini):
  // there the line has the tokens and no price.
  test('usage line under demo-openrouter replies', { skip: !USAGE && 'E2E_USAGE=0: llm_meta is not asked for meta.usage and meta.cost_usd' }, async () => {
    for (const endpoint of META_PROTOCOLS) {
      for (const mode of ['stream', 'json']) {
        const what = `${endpoint}, ${mode}`;
        await ask('Hello there, how are you today?', { endpoint, mode, model: 'demo-openrouter' });
        const msg = await ask('Weather in Paris?', { endpoint, mode, model: 'demo-openrouter', newChat: false });
        const line = await assertUsageLineShowsMeta(msg, what);
        const m = /^Tokens: (\d+) in \((\d+) cached\) \/ (\d+) out$/.exec(line['usage-tokens'] || '');
        assert.ok(m, `${what}: tokens part ${line['usage-tokens']}`);
        assert.ok(Number(m[2]) > 0 && Number(m[2]) < Number(m[1]) && Number(m[3]) > 0, `${what}: ${line['usage-tokens']}`);
        const meta = await metaOf(msg);
        if (endpoint === 'gemini') {
          assert.equal(meta.cost_usd, undefined, what);
          continue;
        }
        assert.ok(meta.cost_usd > 0, `${what}: cost_usd ${meta.cost_usd}`);
        assert.match(line['usage-cost'], /^\$0\.\d+$/, what);
      }
    }
    await shot('10-usage-line');
  });

  // SPEC 11.1 with mark_interrupted on (Caddyfile.example): a stream the
  // demo gateway cuts half-way shows its text so far and the notice under
  // it, never an error, in every protocol, streamed and run-once; a JSON
  // reply stays whole (the edge endpoint's run-once asks its upstream for
  // JSON). The prompt words "cut short" do it on any model.
  test('a reply cut short: the notice under it in every protocol, streamed and run-once', async () => {
    const page = env.page;
    const notice = /^Cut short\. The upstream ended this reply before it was complete/;
    const full = /^You said: "Open my terminal"\. I ran the launcher tool, which opened a terminal\. This reply comes from the llm_meta demo gateway\.$/;
    for (const endpoint of ['chat', 'responses', 'anthropic', 'gemini', 'edge']) {
      for (const mode of ['stream', 'run-once', 'json']) {
        if (endpoint === 'edge' && mode === 'json') continue;
        const what = `${endpoint}, ${mode}`;
        const msg = await ask('Open my terminal', { endpoint, mode, model: 'demo-cut' });
        const text = (await msg.getByTestId('reply-text').textContent()).trim();
        assert.equal(await msg.getByTestId('error-message').count(), 0, `${what}: ${await texts(msg.getByTestId('error-message'))}`);
        assert.equal(await msg.getByTestId('note').count(), 0, what);
        if (mode === 'json' || (endpoint === 'edge' && mode === 'run-once')) {
          assert.equal(await msg.getAttribute('data-state'), 'done', what);
          assert.match(text, full, what);
          assert.ok(!(await msg.getByTestId('interrupted-notice').isVisible()), what);
          continue;
        }
        assert.equal(await msg.getAttribute('data-state'), 'interrupted', what);
        assert.match(await msg.getByTestId('status').textContent(), /^cut short/, what);
        assert.ok(await msg.getByTestId('interrupted-notice').isVisible(), what);
        assert.match(await msg.getByTestId('interrupted-notice').textContent(), notice, what);
        // Half of the words came: a start of the whole reply, not all of it.
        assert.ok(text.length > 20 && 'You said: "Open my terminal". I ran the launcher tool, which opened a terminal.'.startsWith(text), `${what}: ${text}`);
        assert.equal((await metaOf(msg)).interrupted, true, what);
        assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['launcher'], what);
        if (endpoint === 'anthropic' && mode === 'stream') await shot('11-cut-short');
      }
    }
    const msg = await ask('Please stop, cut short', { model: 'demo-openai' });
    assert.equal(await msg.getAttribute('data-state'), 'interrupted');
    assert.ok(await msg.getByTestId('interrupted-notice').isVisible());
    const whole = await ask('Open my terminal');
    assert.equal(await whole.getAttribute('data-state'), 'done');
    assert.ok(!(await whole.getByTestId('interrupted-notice').isVisible()));
    await page.getByTestId('new-chat').click();
  });

  // SPEC 11.2: demo-auto answers as demo-openai-fallback; the page says
  // which model answered, in every protocol (the protocol picker's test
  // checks that it says nothing when the model asked for answered).
  test('answered by: the model that answered when it is not the one asked for', async () => {
    for (const endpoint of ['chat', 'responses', 'anthropic', 'gemini', 'edge']) {
      for (const mode of ['chat', 'edge'].includes(endpoint) ? ['stream', 'run-once'] : ['stream', 'json']) {
        const what = `${endpoint}, ${mode}`;
        const msg = await ask('Weather in Paris?', { endpoint, mode, model: 'demo-auto' });
        assert.equal(await msg.getAttribute('data-state'), 'done', what);
        assert.ok(await msg.getByTestId('model-served').isVisible(), what);
        assert.equal(await msg.getByTestId('model-served').textContent(), 'answered by demo-openai-fallback', what);
        if (endpoint === 'chat' && mode === 'stream') await shot('12-answered-by');
      }
    }
  });

  // SPEC 11.3 with tool_arguments on (Caddyfile.example): each chip shows
  // its call's arguments on one line, in full in its tooltip and, expanded,
  // indented below it.
  test('tool chips show each call\'s arguments: on one line, in the tooltip, in full when expanded', async () => {
    const cases = [['chat', 'stream'], ['chat', 'json'], ['chat', 'run-once'], ['edge', 'stream'], ['responses', 'stream'],
      ['responses', 'json'], ['anthropic', 'stream'], ['anthropic', 'json'], ['gemini', 'stream'], ['gemini', 'json']];
    for (const [endpoint, mode] of cases) {
      const what = `${endpoint}, ${mode}`;
      const msg = await ask('Weather in Paris?', { endpoint, mode });
      assert.equal(await msg.getAttribute('data-state'), 'done', what);
      assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['get_weather', 'get_forecast'], what);
      assert.deepEqual(await texts(msg.getByTestId('tool-args-short')), ['(city: Paris, unit: celsius)', '(city: Paris, days: 3)'], what);
      const first = msg.getByTestId('tool-call').first();
      assert.equal(await first.locator('summary').getAttribute('title'), 'get_weather({"city":"Paris","unit":"celsius"})', what);
      assert.ok(!(await first.getByTestId('tool-args').isVisible()), `${what}: folded until asked`);
      await first.locator('summary').click();
      assert.ok(await first.getByTestId('tool-args').isVisible(), what);
      assert.equal(await first.getByTestId('tool-args').textContent(), '{\n  "city": "Paris",\n  "unit": "celsius"\n}', what);
      assert.equal(await msg.getByTestId('tool-args-clipped').count(), 0, what);
      if (mode === 'stream' && endpoint === 'chat') await shot('13-tool-arguments');
    }
    // The converted streams: Agent Hustle's 9 parts, the UI stream's
    // tool-input-available parts.
    for (const [model, text, short] of [['demo-hustle', 'SOL price?', '(symbol: SOL)'], ['demo-ui', 'Open my terminal', '(app: terminal)']]) {
      const msg = await ask(text, { model });
      assert.deepEqual(await texts(msg.getByTestId('tool-args-short')), [short], model);
    }
  });

  // Arguments that are markup show as text; arguments llm_meta clipped show
  // as they came, marked clipped, in a box that scrolls.
  test('tool arguments: markup is text, long arguments are clipped and say so', async () => {
    const page = env.page;
    const msg = await ask('hello', { baseUrl: env.fakeSite, model: 'fake-args', mode: 'json' });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['render_html', 'write_file']);
    const [html, long] = [msg.getByTestId('tool-call').nth(0), msg.getByTestId('tool-call').nth(1)];
    await html.locator('summary').click();
    await long.locator('summary').click();
    assert.equal(await html.getByTestId('tool-args').textContent(), JSON.stringify(JSON.parse(FAKE_HTML), null, 2));
    assert.equal(await msg.locator('.tool-call img, .tool-call script').count(), 0, 'no element made from the arguments');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.match(await long.getByTestId('tool-args-clipped').textContent(), /^Clipped: llm_meta keeps the first 4,096 bytes/);
    assert.equal(await html.getByTestId('tool-args-clipped').count(), 0);
    const shown = await long.getByTestId('tool-args').textContent();
    assert.ok(FAKE_LONG.startsWith(shown) && shown.length < FAKE_LONG.length, 'the clipped arguments, as they came');
    assert.ok(Buffer.byteLength(shown) <= 4096 && Buffer.byteLength(shown) > 4090, `${Buffer.byteLength(shown)} bytes`);
    assert.ok(!shown.includes('\ufffd'), 'clipped at a character boundary');
    assert.match(await long.getByTestId('tool-args-short').textContent(), /…\)$/);
    const box = await long.getByTestId('tool-args').evaluate((el) => ({ h: el.clientHeight, sh: el.scrollHeight, w: el.scrollWidth, cw: el.clientWidth }));
    assert.ok(box.h <= 270 && box.sh > box.h && box.w <= box.cw, `a bounded box that scrolls down, never sideways: ${JSON.stringify(box)}`);
    await shot('14-tool-arguments-clipped');
  });

  test('prompt trimming: a long first message is dropped on the next turn, and the page says so', async () => {
    await ask('x'.repeat(50_000), { model: 'demo-plain' });
    const msg = await ask('Short follow-up', { model: 'demo-plain', mode: 'run-once', newChat: false });
    assert.match(await msg.getByTestId('reply-text').textContent(), /plain reply/);
    assert.match(await msg.getByTestId('prompt-trimmed').textContent(), /^Prompt trimmed to \d[\d,]* characters/);
  });

  test('errors are shown, never swallowed', async () => {
    // The :8082 site of Caddyfile.example (bearer check, CORS) in front of
    // the fake gateway; every case goes into one conversation.
    const edge = { baseUrl: env.edgeSite, token: TOKEN, newChat: false };
    const errorOf = (msg) => msg.getByTestId('error-message').textContent();

    // No token: the site's bearer check answers 401 {"error":"Unauthorized"}
    // before llm_meta is reached (the example keeps it first in a route).
    await env.page.getByTestId('new-chat').click();
    let msg = await ask('hello', { ...edge, endpoint: 'edge', token: '' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.equal(await errorOf(msg), 'HTTP 401: Unauthorized');

    // With the token: the fake gateway's JSON, streamed by the edge endpoint.
    msg = await ask('hello', { ...edge, endpoint: 'edge', model: 'ok' });
    assert.equal(await msg.getAttribute('data-state'), 'done');
    assert.equal((await msg.getByTestId('reply-text').textContent()).trim(), 'Fake gateway here.');
    assert.deepEqual(await texts(msg.getByTestId('tool-chip')), ['lookup']);

    // Upstream HTTP error, edge endpoint: 502 {"error": "..."}.
    msg = await ask('hello', { ...edge, endpoint: 'edge', mode: 'run-once', model: 'fail-http' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.equal(await errorOf(msg), 'HTTP 502: fake gateway: model overloaded');

    // Upstream HTTP error, OpenAI path: passed through as it came.
    msg = await ask('hello', { ...edge, model: 'fail-http' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.equal(await errorOf(msg), 'HTTP 503: fake gateway: model overloaded');

    // An error part in a data stream: an error event after the text so far.
    msg = await ask('hello', { ...edge, model: 'fail-stream' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.match(await msg.getByTestId('reply-text').textContent(), /Looking that up/);
    assert.equal(await errorOf(msg), 'Error event in the stream: fake gateway: the tool crashed');

    // The same on the edge endpoint: also shown as text, "Error: …".
    msg = await ask('hello', { ...edge, endpoint: 'edge', model: 'fail-stream' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.match(await msg.getByTestId('reply-text').textContent(), /Looking that up.*Error: fake gateway: the tool crashed/s);
    assert.equal(await errorOf(msg), 'Error event in the stream: fake gateway: the tool crashed');

    // Run-once of the same: 502 with the content so far.
    msg = await ask('hello', { ...edge, mode: 'run-once', model: 'fail-stream' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.match(await errorOf(msg), /^HTTP 502: .*the tool crashed/);
    assert.match(await msg.getByTestId('reply-text').textContent(), /Looking that up/);

    // Nothing listening: a network error.
    msg = await ask('hello', { ...edge, baseUrl: `http://127.0.0.1:${await freePort()}`, model: 'ok' });
    assert.equal(await msg.getAttribute('data-state'), 'error');
    assert.match(await errorOf(msg), /^Network error: /);
    await shot('07-errors');
  });

  test('Stop ends a stream and keeps what came', async () => {
    const page = env.page;
    await page.getByTestId('new-chat').click();
    await page.getByLabel('Model', { exact: true }).selectOption('demo-openai');
    await page.getByTestId('mode-stream').check({ force: true });
    await page.getByLabel('Base URL').fill('');
    await page.getByLabel('Bearer token').fill('');
    await page.getByLabel('Message', { exact: true }).fill('Weather in Paris?');
    await page.getByTestId('send-button').click();
    await page.waitForFunction(() => {
      const t = document.querySelector('[data-testid="assistant-message"] [data-testid="reply-text"]');
      return t && t.textContent.length > 0;
    });
    await page.getByTestId('stop-button').click();
    const msg = page.getByTestId('assistant-message').last();
    await page.waitForSelector('[data-testid="assistant-message"][data-state="stopped"]');
    assert.match(await msg.getByTestId('note').textContent(), /Stopped/);
    assert.ok(await page.getByTestId('send-button').isEnabled());
    assert.ok(!(await page.getByTestId('stop-button').isVisible()));
  });

  test('README screenshot: a short conversation', async () => {
    const page = env.page;
    await page.setViewportSize({ width: 1280, height: 1240 });
    await ask('SOL price?', { model: 'demo-hustle', baseUrl: '', token: '' });
    await ask('Weather in Paris?', { model: 'demo-auto', newChat: false });
    await ask('Open my terminal', { model: 'demo-cut', newChat: false });
    const adv = page.locator('details.advanced');
    if (await adv.evaluate((d) => d.open)) await adv.locator('summary').click();
    await page.getByLabel('Message', { exact: true }).fill('Can we meet Acme Corp next Tuesday?');
    await page.getByTestId('log').evaluate((log) => { log.scrollTop = log.scrollHeight; });
    await page.getByLabel('Message', { exact: true }).blur();
    await shot('00-playground');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('no uncaught errors in the page', () => {
    assert.deepEqual(env.pageErrors, []);
  });
});
