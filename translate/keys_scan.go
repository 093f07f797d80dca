package translate

import "github.com/llm-meta/llm_meta/internal/jsonscan"

// keySet flags the keys an event's JSON holds, by the key scan
// (jsonscan.Keys): the two every stream is read for, then its protocol's
// own keys (protocol.keys), keyProtocol<<i for the i-th.
type keySet uint16

const (
	keyMeta     keySet = 1 << iota // "meta": an upstream meta to merge (SPEC 4.1)
	keyError                       // "error": an error event (SPEC 4.3)
	keyProtocol                    // the first of the protocol's keys
)

// maxProtocolKeys is how many keys of its own a protocol may list.
const maxProtocolKeys = 14

// newKeyTable is the key scan's table of the engine's keys and a
// protocol's, flagged as keySet says.
func newKeyTable(own []string) *jsonscan.Keys {
	if len(own) > maxProtocolKeys {
		panic("translate: a protocol lists more than maxProtocolKeys keys")
	}
	return jsonscan.NewKeys(append([]string{"meta", "error"}, own...)...)
}
