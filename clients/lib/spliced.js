// Raw checks of the Responses and Anthropic streams through llm_meta (SPEC
// 4.4, 4.5): what the app's bytes must be, compared with the bytes the
// upstream sent for the same request.

import assert from 'node:assert/strict';

import { readText, sseEvents } from './harness.js';

// POSTs body to path and returns the whole response text, with the
// response.
export async function postText(base, path, body, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  return { res, text: await readText(res) };
}

const isMetaOnly = (e) => {
  try {
    const obj = JSON.parse(e.data);
    return obj !== null && typeof obj === 'object' && Object.keys(obj).length === 1 && 'meta' in obj;
  } catch {
    return false;
  }
};

// Asserts that `got` (llm_meta's stream) is `upstream` (the upstream's
// bytes for the same request) with the meta-only events withheld and every
// other event byte-identical, in order, except the terminal one: that one
// is the upstream's with `"meta":{...}` added to the object metaHolder
// picks (the response object of response.completed, or message_stop
// itself), its other bytes unchanged. Returns that meta.
export function assertSpliced(got, upstream, { terminal, metaHolder }) {
  const want = sseEvents(upstream).filter((e) => !isMetaOnly(e));
  const have = sseEvents(got);
  assert.equal(have.length, want.length, 'one event for each upstream event but the meta-only ones');
  let meta;
  have.forEach((e, i) => {
    const obj = JSON.parse(e.data); // every event parses
    if (!terminal(obj)) {
      assert.equal(e.raw, want[i].raw, `event ${i} (${obj.type}) byte-identical`);
      return;
    }
    assert.equal(i, have.length - 1, 'the terminal event is the last');
    meta = metaHolder(obj).meta;
    assert.equal(typeof meta, 'object', `${obj.type} carries meta`);
    // llm_meta writes meta as compact JSON: without it, the upstream's bytes
    assert.equal(e.raw.replace(`,"meta":${JSON.stringify(meta)}`, ''), want[i].raw, `${obj.type}: only meta added`);
  });
  assert.notEqual(meta, undefined, 'a terminal event');
  return meta;
}
