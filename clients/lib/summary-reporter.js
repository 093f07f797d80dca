// A node:test reporter that ends the run with one line per client suite
// (one test file each), naming the client libraries it runs and their
// installed versions, with its pass, fail and pending counts:
//
//   suite openai.test.js (openai 7.57.0): 11 pass, 0 fail
//
// A pending test (lib/pending.js) passes while it fails as expected; it is
// counted both as a pass and as pending.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The client libraries each suite runs.
const clients = {
  'openai.test.js': ['openai'],
  'openai-responses.test.js': ['openai'],
  'openai-usage.test.js': ['openai'],
  'anthropic.test.js': ['@anthropic-ai/sdk'],
  'aisdk-openai-responses.test.js': ['ai', '@ai-sdk/openai'],
  'aisdk-anthropic.test.js': ['ai', '@ai-sdk/anthropic'],
  'google-genai.test.js': ['@google/genai'],
  'aisdk-google.test.js': ['ai', '@ai-sdk/google'],
  'structured-edge.test.js': ['openai'],
  'convert.test.js': ['openai'],
  'aisdk-openai-compatible.test.js': ['ai', '@ai-sdk/openai-compatible'],
  'aisdk-openai.test.js': ['ai', '@ai-sdk/openai'],
  'langchain-openai.test.js': ['@langchain/openai', '@langchain/core'],
  'openai-agents.test.js': ['@openai/agents'],
  'interrupted.test.js': ['openai', '@anthropic-ai/sdk', '@google/genai', 'ai', '@ai-sdk/openai', '@ai-sdk/openai-compatible',
    '@ai-sdk/anthropic', '@ai-sdk/google'],
  'jarvis.test.js': [],
};

function version(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

function label(file) {
  const name = path.basename(file);
  const libs = (clients[name] ?? []).map((p) => `${p} ${version(p)}`);
  return libs.length ? `${name} (${libs.join(', ')})` : name;
}

export default async function* summary(source) {
  const byFile = new Map();
  const counts = (file) => {
    if (!byFile.has(file)) byFile.set(file, { pass: 0, fail: 0, pending: 0 });
    return byFile.get(file);
  };
  for await (const { type, data } of source) {
    if (!data?.file) continue;
    if ((type === 'test:pass' || type === 'test:fail') && data.details?.type !== 'suite') {
      counts(data.file)[type === 'test:pass' ? 'pass' : 'fail']++;
    } else if (type === 'test:diagnostic' && String(data.message).startsWith('pending (')) {
      counts(data.file).pending++;
    }
  }
  let lines = '\n';
  for (const [file, c] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    lines += `suite ${label(file)}: ${c.pass} pass, ${c.fail} fail${c.pending ? ` (${c.pending} pending: fails as expected until its issue lands)` : ''}\n`;
  }
  yield lines;
}
