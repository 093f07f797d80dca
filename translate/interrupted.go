package translate

import (
	"bytes"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// A stream the upstream cut short (SPEC 11.1): its body ended cleanly
// before the end its protocol defines. Each protocol says where its end
// is; what they share is here.

// KeyInterrupted is the meta key of a stream cut short (SPEC 11.1).
const KeyInterrupted = "interrupted"

// InterruptedMessage is the message of the module's own error event.
const InterruptedMessage = "The upstream ended the reply before it was complete."

var jsonTrue = []byte("true")

// appendMetaEnd ends an error event's data object, with ,"meta":META
// when meta is not nil, and the event.
func appendMetaEnd(dst, meta []byte) []byte {
	if meta != nil {
		dst = append(dst, `,"meta":`...)
		dst = append(dst, meta...)
	}
	return append(dst, "}\n\n"...)
}

// decideInterrupted settles, when the reply ends, whether the stream was cut short:
// it ended without its terminal unit (term nil), it carried what makes
// it a stream of its protocol (opened), no earlier end came (a
// finish_reason, an error event), no unit passed unread where the framing
// cannot tell (blind), and the connection did not fail. A converter in
// front may have said so already (Reply.Interrupted).
func (r *Rewriter) decideInterrupted(term []byte) {
	rep := r.reply
	if term == nil && r.opened && !r.endSeen && !r.blind && !rep.hasErr && !rep.Broken {
		rep.Interrupted = true
	}
	if rep.Interrupted {
		rep.Meta.Set(KeyInterrupted, jsonTrue)
	}
}

// markInterrupted writes the protocol's own error unit after its ending,
// when the stream was cut short and mark_interrupted is on.
func (r *Rewriter) markInterrupted() {
	if !r.reply.Interrupted || !r.opts.MarkInterrupted {
		return
	}
	var meta []byte
	if r.opts.FinalMeta && !r.reply.Meta.Empty() {
		meta = r.reply.Meta.JSON()
	}
	if own := r.reader.appendInterrupted(r.u.buf[:0], meta); len(own) > 0 {
		r.u.buf = r.fr.own(own)[:0]
	}
}

// finishReasonFrom reports whether a chat chunk has a finish_reason that is
// not null, looking from at (the key scan's first key: nothing before it is
// a key). Every chunk until the end is looked at, so it is a byte search
// rather than a parse (a key inside a string would have its quotes
// escaped): the key is checked at at, then around each '_' after it, a
// byte rare in a chunk, and the usual "finish_reason":n is told by two
// word comparisons.
func finishReasonFrom(data []byte, at int) bool {
	const key = `"finish_reason"`
	for {
		null := at+len(key+":n") <= len(data) && string(data[at:at+len(key+":")]) == key+":" && data[at+len(key+":")] == 'n'
		if !null && at+len(key) <= len(data) && string(data[at:at+len(key)]) == key {
			k := jsonscan.Space(strView(data), at+len(key))
			if k < len(data) && data[k] == ':' {
				k = jsonscan.Space(strView(data), k+1)
				if k < len(data) && data[k] != 'n' {
					return true
				}
			}
		}
		i := at + len(`"finish_`) // past this one's '_'
		j := bytes.IndexByte(data[min(i, len(data)):], '_')
		if j < 0 {
			return false
		}
		at = i + j - len(`"finish`)
	}
}
