// Streams cut short (SPEC 11.1): model `<scenario>-cut` gets the stream of
// <scenario> up to its middle event, then a clean end of the body, as an
// upstream whose worker crashed or whose proxy timed out ends it. Only
// streams are cut: a JSON reply stays whole.

export const CUT = '-cut';

// The scenario a cut model names, or null.
export const cutBase = (model) => (typeof model === 'string' && model.endsWith(CUT) ? model.slice(0, -CUT.length) : null);

// The first half of a stream's events (rounded up), each whole with its
// blank line, LF or CRLF framing alike.
export function cutWire(wire) {
  const events = wire.split(/(?<=\r\n\r\n|\n\n)/);
  return events.slice(0, Math.ceil(events.length / 2)).join('');
}
