// For client libraries that drop what they do not model: an app's `fetch`
// that hands the response on untouched and reads a copy of an event stream
// for the chunks carrying `meta` (the final meta chunk has `choices: []`,
// which some libraries skip before the app could see it), or of a JSON
// reply for its top-level `meta` (a client that keeps only the fields it
// knows, as @google/genai does).
//
//   const tap = metaTap();
//   new SomeClient({ fetch: tap.fetch });
//   … consume the stream …
//   const metas = await tap.metas(); // every meta seen, in order

export function metaTap() {
  const reading = [];
  const metas = [];
  async function read(body) {
    const dec = new TextDecoder();
    let buf = '';
    const onLine = (line) => {
      if (!line.startsWith('data:')) return;
      try {
        const obj = JSON.parse(line.slice(5));
        if (obj && typeof obj.meta === 'object') metas.push(obj.meta);
      } catch {
        // [DONE] or not JSON: nothing to read
      }
    };
    for await (const piece of body) {
      buf += dec.decode(piece, { stream: true });
      const lines = buf.split(/\r\n|\r|\n/);
      buf = lines.pop();
      lines.forEach(onLine);
    }
    onLine(buf + dec.decode());
  }
  return {
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      const type = res.headers.get('content-type') ?? '';
      if (res.body && type.startsWith('application/json')) {
        reading.push(res.clone().json().then((obj) => {
          if (obj && typeof obj.meta === 'object') metas.push(obj.meta);
        }, () => {}));
        return res;
      }
      if (!res.body || !type.startsWith('text/event-stream')) return res;
      const [forClient, forTap] = res.body.tee();
      reading.push(read(forTap));
      return new Response(forClient, { status: res.status, statusText: res.statusText, headers: res.headers });
    },
    metas: async () => {
      await Promise.all(reading);
      return metas;
    },
  };
}
