// Test stack: the Node upstream (lib/upstream.js) and a Caddy with llm_meta
// in front of it, both on 127.0.0.1 with free ports.
//
// The Caddy binary is $LLM_META_CADDY when set; otherwise it is built once
// per test process with `go build -o <tmp>/caddy ./cmd/caddy`, run from the
// repository root (the parent of clients/).

import { spawn, execFile } from 'node:child_process';
import { after, before } from 'node:test';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import OpenAI from 'openai';

import { pricesBlock } from './prices.js';
import { startUpstream } from './upstream.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '..', '..');

const BUILD_TIMEOUT_MS = 9 * 60 * 1000;
const START_TIMEOUT_MS = 20 * 1000;

let builtBinary = null; // per process

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { maxBuffer: 16 << 20, ...opts }, (err, stdout, stderr) => {
      if (err) {
        err.message += `\n${stdout}\n${stderr}`;
        reject(err);
      } else resolve({ stdout, stderr });
    });
  });
}

export async function caddyBinary() {
  const fromEnv = process.env.LLM_META_CADDY;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`LLM_META_CADDY=${fromEnv} does not exist`);
    return path.resolve(fromEnv);
  }
  if (builtBinary) return builtBinary;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-meta-caddy-'));
  const out = path.join(dir, 'caddy');
  await run('go', ['build', '-o', out, './cmd/caddy'], { cwd: REPO_ROOT, timeout: BUILD_TIMEOUT_MS });
  builtBinary = out;
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return out;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function caddyfile(port, upstreamPort, extra = '') {
  return `{
	admin off
	auto_https off
	persist_config off
}

http://127.0.0.1:${port} {
	bind 127.0.0.1
	llm_meta${extra ? ` {\n${extra}\n\t}` : ''}
	reverse_proxy 127.0.0.1:${upstreamPort}
}
`;
}

async function waitUntilAnswers(url, proc, logs) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`caddy exited (${proc.exitCode ?? proc.signalCode}) before answering:\n${logs()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`caddy did not answer on ${url} within ${START_TIMEOUT_MS} ms:\n${logs()}`);
}

async function stopProcess(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(t);
}

export async function startCaddy(upstreamPort, { extra = '' } = {}) {
  const bin = await caddyBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'llm-meta-clients-'));
  let lastErr;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const cfg = path.join(dir, 'Caddyfile');
    fs.writeFileSync(cfg, caddyfile(port, upstreamPort, extra));
    let log = '';
    const proc = spawn(bin, ['run', '--config', cfg, '--adapter', 'caddyfile'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      // keep Caddy's data and config dirs inside the temp dir
      env: { ...process.env, HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_CONFIG_HOME: path.join(dir, 'config') },
    });
    const keep = (b) => { log = (log + b.toString()).slice(-20000); };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntilAnswers(url, proc, () => log);
      return {
        url,
        port,
        logs: () => log,
        stop: async () => {
          await stopProcess(proc);
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      lastErr = err;
      await stopProcess(proc);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  throw lastErr;
}

// Starts upstream + Caddy; returns { caddy, upstream, base, stop }.
// opts.prices: a price table (lib/prices.js) for llm_meta's `prices`;
// opts.extra: more lines for its block.
export async function startStack({ prices, extra = '' } = {}) {
  const upstream = await startUpstream();
  let caddy;
  try {
    caddy = await startCaddy(upstream.port, { extra: [prices ? pricesBlock(prices) : '', extra].filter(Boolean).join('\n') });
  } catch (err) {
    await upstream.close();
    throw err;
  }
  return {
    caddy,
    upstream,
    base: caddy.url,
    stop: async () => {
      await caddy.stop();
      await upstream.close();
    },
  };
}

// Starts the stack before a test file's tests and stops it after them:
// setUp(stack) runs once it is up, to make the file's clients.
//
//   let stack, client;
//   useStack((s) => { stack = s; client = openaiClient(s); });
export function useStack(setUp = () => {}, opts) {
  let stack;
  before(async () => {
    stack = await startStack(opts);
    await setUp(stack);
  }, { timeout: 600_000 }); // the first file may build Caddy
  after(async () => {
    await stack?.stop();
  });
}

// The official openai client pointed at the stack's Caddy.
export function openaiClient(stack) {
  return new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'test-key', maxRetries: 0, timeout: 15_000 });
}

// Reads a fetch Response body as text, bounded in time.
export async function readText(res, ms = 10000) {
  const timer = AbortSignal.timeout(ms);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let s = '';
  const onAbort = () => reader.cancel().catch(() => {});
  timer.addEventListener('abort', onAbort);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      s += dec.decode(value, { stream: true });
    }
    if (timer.aborted) throw new Error(`body not finished within ${ms} ms`);
    return s + dec.decode();
  } finally {
    timer.removeEventListener('abort', onAbort);
  }
}

// Splits an SSE body (LF line ends, or CRLF as Gemini's) into events, each
// { data, raw }.
export function sseEvents(text) {
  return text
    .split(/\r\n\r\n|\n\n/)
    .filter((e) => e.length > 0)
    .map((raw) => ({
      raw,
      data: raw
        .split(/\r\n|\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n'),
    }));
}
