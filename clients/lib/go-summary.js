// Reads `go test -json` on stdin, prints the tests' output as `go test -v`
// would, then one line per package (one Go client suite each) with its
// pass and fail counts, subtests included, like lib/summary-reporter.js:
//
//   suite clients/go/openaigo (github.com/openai/openai-go/v3 v3.96.0): 10 pass, 0 fail
//
// Exits non-zero when a test or a package failed.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const goDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'go');

// The client module each suite runs, with its version from go.mod.
const clients = {
  openaigo: 'github.com/openai/openai-go/v3',
  goopenai: 'github.com/sashabaranov/go-openai',
};
const gomod = fs.readFileSync(path.join(goDir, 'go.mod'), 'utf8');
const version = (mod) => gomod.match(new RegExp(`^\\s*(?:require\\s+)?${mod.replace(/[./]/g, '\\$&')}\\s+(\\S+)`, 'm'))?.[1] ?? '?';

const counts = new Map();
let failed = false;
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  let ev;
  try {
    ev = JSON.parse(line);
  } catch {
    process.stdout.write(line + '\n'); // build errors come as plain text
    failed = true;
    continue;
  }
  if (ev.Action === 'output') process.stdout.write(ev.Output);
  if (!ev.Package) continue;
  if (!counts.has(ev.Package)) counts.set(ev.Package, { pass: 0, fail: 0 });
  const c = counts.get(ev.Package);
  if (ev.Test && ev.Action === 'pass') c.pass++;
  if (ev.Action === 'fail') {
    failed = true;
    if (ev.Test) c.fail++;
  }
}
let out = '\n';
for (const [pkg, c] of [...counts].sort()) {
  const short = pkg.replace(/^github\.com\/llm-meta\/llm_meta\//, '');
  const mod = clients[path.basename(pkg)];
  if (!mod && c.pass + c.fail === 0) continue; // helper packages without tests
  out += `suite ${short}${mod ? ` (${mod} ${version(mod)})` : ''}: ${c.pass} pass, ${c.fail} fail\n`;
}
process.stdout.write(out);
process.exit(failed ? 1 : 0);
