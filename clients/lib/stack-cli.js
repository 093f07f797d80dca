// The test stack as a process, for client suites written in other
// languages (clients/go): starts the upstream and a Caddy with llm_meta in
// front of it (lib/harness.js, so $LLM_META_CADDY is the binary), prints one
// JSON line
//
//   {"base": "http://127.0.0.1:PORT", "upstream": "http://127.0.0.1:PORT", "expect": {...}}
//
// (expect: lib/upstream.js's expectations(), by scenario), then runs until
// its stdin closes or it gets SIGTERM or SIGINT, and stops both.

import { startStack } from './harness.js';
import { expectations } from './upstream.js';

const stack = await startStack();
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();

process.stdout.write(JSON.stringify({ base: stack.base, upstream: stack.upstream.url, expect: expectations() }) + '\n');
