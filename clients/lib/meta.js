// What an app must read in meta for a scenario of the usage suites: its
// tools, its usage in SPEC 9.1's shape, and its cost (SPEC 9.2).

import assert from 'node:assert/strict';

import { costFrom } from './prices.js';

// meta.tools_used is there only when a tool was used (llm_meta adds to meta
// only what it derived); meta.usage is the scenario's metaUsage; meta.cost_usd
// is the upstream's figure (the scenario's costUsd), else the price row's
// when its glob matches the model, else absent.
export function assertMeta(meta, s, priceRow) {
  assert.equal(typeof meta, 'object', 'meta is there');
  assert.deepEqual(meta.tools_used, s.toolsUsed.length ? s.toolsUsed : undefined);
  assert.deepEqual(meta.usage, s.metaUsage);
  if (s.costUsd !== undefined) assertCost(meta.cost_usd, s.costUsd);
  else if (globMatches(priceRow.glob, s.model)) assertCost(meta.cost_usd, costFrom(priceRow, s.metaUsage));
  else assert.equal('cost_usd' in meta, false, 'no cost_usd without a cost or a price row');
}

// A price row's glob (`*` and `?`, as llm_meta matches model names) against
// a model.
function globMatches(glob, model) {
  const re = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 's').test(model);
}

// llm_meta rounds to 9 places in float64, as costFrom does; the two may
// still differ in the last bit.
export function assertCost(got, want) {
  assert.equal(typeof got, 'number', `meta.cost_usd ${got}`);
  assert.ok(Math.abs(got - want) < 1e-12, `meta.cost_usd ${got}, want ${want}`);
}
