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
    assert.equal(app.contentOf({ choices: [{ message: { content: [{ type: 'text', text: 'a' }, { text: 'b' }] } }] }), 'a\nb');
    assert.equal(app.contentOf({ choices: [{ text: 't' }] }), 't');
    assert.equal(app.errorMessage({ error: 'Unauthorized' }, '', 401, 'Unauthorized'), 'Unauthorized');
    assert.equal(app.errorMessage({ error: { message: 'bad' } }, '', 400, ''), 'bad');
    assert.equal(app.errorMessage(null, '', 502, 'Bad Gateway'), '502 Bad Gateway');
  });

  test('requests: OpenAI path and edge endpoint', () => {
    const hist = [{ role: 'user', content: 'hi' }];
    const s = { model: 'demo-ui', endpoint: 'openai', mode: 'run-once', structured: true, baseUrl: 'http://x/', token: '', sessionId: 's1' };
    let r = app.buildRequest(s, hist);
    assert.equal(r.url, 'http://x/v1/chat/completions');
    assert.deepEqual(r.body, { model: 'demo-ui', messages: hist, stream: true, run_once: true, enable_structured_output: true });
    r = app.buildRequest({ ...s, endpoint: 'edge', mode: 'stream', structured: false, token: 't' }, hist);
    assert.equal(r.url, 'http://x/functions/v1/jarvis');
    assert.equal(r.headers['x-stream'], 'true');
    assert.equal(r.headers.Authorization, 'Bearer t');
    assert.deepEqual(r.body, { message: 'hi', messages: hist, session_id: 's1', model: 'demo-ui' });
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

// fakeGateway stands behind the :8082 site (JARVIS_GATEWAY_URL) to produce
// the errors the demo gateway never makes: an HTTP error and an error part in
// an Agent Hustle data stream. Any other model gets a JSON completion.
function fakeGateway() {
  return http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      let model = '';
      try { model = JSON.parse(body).model || ''; } catch { /* not JSON */ }
      if (model === 'fail-http') {
        res.writeHead(503, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'fake gateway: model overloaded', type: 'server_error' } }));
      } else if (model === 'fail-stream') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Vercel-AI-Data-Stream': 'v1' });
        res.end('f:{"messageId":"msg-fail"}\n0:"Looking that up... "\n3:"fake gateway: the tool crashed"\n');
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({
          id: 'chatcmpl-fake', object: 'chat.completion', created: 1767225600, model,
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Fake gateway here.',
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] } }],
        }));
      }
    });
  });
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
  const cfPath = path.join(env.tmp, 'Caddyfile');
  fs.writeFileSync(cfPath, caddyfileFor(fs.readFileSync(path.join(REPO, 'Caddyfile.example'), 'utf8'), env.ports));

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
  try {
    await waitForHTTP(`${env.base}/playground/`, env.caddy, 30_000);
    await waitForHTTP(`${env.edgeSite}/`, env.caddy, 10_000);
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
  const opts = { model: 'demo-openai', endpoint: 'openai', mode: 'stream', structured: false,
    baseUrl: '', token: '', newChat: true, ...o };
  if (opts.newChat) await page.getByTestId('new-chat').click();
  const known = ['demo-openai', 'demo-hustle', 'demo-ui', 'demo-structured', 'demo-plain'];
  if (known.includes(opts.model)) {
    await page.getByLabel('Model', { exact: true }).selectOption(opts.model);
  } else {
    await page.getByLabel('Model', { exact: true }).selectOption('__custom');
    await page.getByLabel('Model name').fill(opts.model);
  }
  await page.getByTestId(opts.endpoint === 'edge' ? 'endpoint-edge' : 'endpoint-openai').check();
  await page.getByTestId(opts.mode === 'run-once' ? 'mode-run-once' : 'mode-stream').check({ force: true });
  await page.getByTestId('structured-toggle').setChecked(opts.structured);
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
    await ask('Weather in Paris?', { baseUrl: '', token: '' });
    await ask('SOL price?', { model: 'demo-hustle', newChat: false });
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
