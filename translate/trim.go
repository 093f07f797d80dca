package translate

import (
	"unicode/utf8"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Prompt trimming (SPEC 3.1).
//
// The size of a prompt is the sum, over messages, of the code points of each
// message's text: content when it is a string, the text of each part of type
// "text" when it is an array (images and other parts count 0).
//
// Messages are removed in units, oldest unit first, until the size fits:
//   - system and developer messages are never removed;
//   - an assistant message with tool_calls forms one unit with the tool
//     messages that answer it: those after it whose tool_call_id is one of its
//     calls' ids, and the tool messages directly following it (which answer
//     it whatever their id says). The legacy form, an assistant with
//     function_call and the function messages directly following it, is
//     paired the same way;
//   - every other message (user, plain assistant, a tool message whose
//     assistant is not in the prompt) is a unit of its own;
//   - the unit holding the last message is never removed. When the last
//     message is a tool answer, its assistant therefore stays too: a tool
//     message never stays without its assistant, and is never removed
//     without it.
//
// When nothing removable is left and the prompt still does not fit, what is
// left is sent: the removals made stand and are reported.

// trimMsg is one message as trimming sees it.
type trimMsg struct {
	raw    string
	role   string
	callID string // tool_call_id of a tool message
	size   int
	unit   int // -1: never removed (system, developer); -2: not yet grouped
}

// TrimPrompt trims a chat request body's messages to maxChars code points
// (SPEC 3.1). When messages were removed, out is body with the new messages
// array (every other byte kept), trimmedTo the size after trimming and
// trimmed true; otherwise out is body itself. maxChars <= 0 does nothing.
func TrimPrompt(body []byte, maxChars int) (out []byte, trimmedTo int64, trimmed bool) {
	if maxChars <= 0 {
		return body, 0, false
	}
	msgsRes := gjson.GetBytes(body, "messages")
	if !msgsRes.IsArray() {
		return body, 0, false
	}
	all := msgsRes.Array()
	msgs := make([]trimMsg, len(all))
	total := 0
	for i, m := range all {
		msgs[i] = trimMsg{raw: m.Raw, role: m.Get("role").Str, size: messageSize(m), unit: -2}
		if msgs[i].role == "tool" {
			msgs[i].callID = m.Get("tool_call_id").Str
		}
		total += msgs[i].size
	}
	if total <= maxChars {
		return body, 0, false
	}

	// Group the messages into units, numbered in order of their oldest member.
	var unitSize []int
	newUnit := func() int {
		unitSize = append(unitSize, 0)
		return len(unitSize) - 1
	}
	for i, m := range all {
		if msgs[i].unit != -2 {
			continue // already claimed by its assistant
		}
		role := msgs[i].role
		switch {
		case role == "system" || role == "developer":
			msgs[i].unit = -1
			continue
		case role == "assistant":
			u := newUnit()
			msgs[i].unit = u
			if calls := m.Get("tool_calls"); calls.IsArray() && calls.Get("#").Int() > 0 {
				claimAnswers(msgs, i, u, "tool", calls)
			} else if m.Get("function_call").IsObject() {
				claimAnswers(msgs, i, u, "function", gjson.Result{})
			}
		default:
			msgs[i].unit = newUnit()
		}
	}
	for _, m := range msgs {
		if m.unit >= 0 {
			unitSize[m.unit] += m.size
		}
	}
	protected := msgs[len(msgs)-1].unit

	removed := make([]bool, len(unitSize))
	changed := false
	for u := range unitSize {
		if total <= maxChars {
			break
		}
		if u == protected {
			continue
		}
		removed[u] = true
		changed = true
		total -= unitSize[u]
	}
	if !changed {
		return body, 0, false
	}

	arr := make([]byte, 0, len(msgsRes.Raw))
	arr = append(arr, '[')
	first := true
	for _, m := range msgs {
		if m.unit >= 0 && removed[m.unit] {
			continue
		}
		if !first {
			arr = append(arr, ',')
		}
		first = false
		arr = append(arr, m.raw...)
	}
	arr = append(arr, ']')
	next, err := sjson.SetRawBytes(body, "messages", arr)
	if err != nil {
		return body, 0, false
	}
	return next, int64(total), true
}

// claimAnswers puts into unit u the messages of role answerRole that answer
// the assistant message at index i: those directly following it, and (for
// tool calls) any later one whose tool_call_id is one of calls' ids.
func claimAnswers(msgs []trimMsg, i, u int, answerRole string, calls gjson.Result) {
	var ids []string
	calls.ForEach(func(_, c gjson.Result) bool {
		if id := c.Get("id"); id.Type == gjson.String && id.Str != "" {
			ids = append(ids, id.Str)
		}
		return true
	})
	following := true
	for j := i + 1; j < len(msgs); j++ {
		if !following && len(ids) == 0 {
			return
		}
		m := &msgs[j]
		if m.role != answerRole {
			following = false
			continue
		}
		if m.unit != -2 {
			continue // claimed by an earlier assistant
		}
		claimed := following
		for _, want := range ids {
			if m.callID == want {
				claimed = true
				break
			}
		}
		if claimed {
			m.unit = u
		}
	}
}

// messageSize is the number of code points of a message's text.
func messageSize(m gjson.Result) int {
	c := m.Get("content")
	switch {
	case c.Type == gjson.String:
		return utf8.RuneCountInString(c.Str)
	case c.IsArray():
		n := 0
		c.ForEach(func(_, p gjson.Result) bool {
			if p.Get("type").Str == "text" {
				if t := p.Get("text"); t.Type == gjson.String {
					n += utf8.RuneCountInString(t.Str)
				}
			}
			return true
		})
		return n
	}
	return 0
}
