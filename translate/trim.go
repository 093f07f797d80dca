package translate

import (
	"math"
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

// trimMsg is one message as trimming sees it: a few words, whatever the
// message holds, so that a body of a million tiny messages costs memory in
// proportion to its bytes, not to a parse tree of them.
type trimMsg struct {
	size  int   // its own size; for the first message of a unit, the unit's
	owner int32 // index of the first message of its unit; -1: never removed
	role  uint8
}

// Roles as trimming tells them apart.
const (
	roleOther    uint8 = iota // user, plain assistant, anything else
	roleKept                  // system, developer: never removed
	roleCalls                 // assistant with tool_calls
	roleFuncCall              // assistant with function_call (and no tool_calls)
	roleTool                  // tool
	roleFunction              // function
	roleRemoved  uint8 = 0x80 // set on the first message of a removed unit
)

// TrimPrompt trims a chat request body's messages to maxChars code points
// (SPEC 3.1). When messages were removed, out is body with the new messages
// array (every other byte kept), trimmedTo the size after trimming and
// trimmed true; otherwise out is body itself. maxChars <= 0 does nothing.
//
// It reads the messages three times at most, each time once: to size the
// prompt, to group the messages into units (each message's unit is found
// from what came before it, never by reading ahead), and to write the
// messages kept.
func TrimPrompt(body []byte, maxChars int) (out []byte, trimmedTo int64, trimmed bool) {
	if maxChars <= 0 {
		return body, 0, false
	}
	msgsRes := gjson.Get(strView(body), "messages")
	if !msgsRes.IsArray() {
		return body, 0, false
	}
	total, count := 0, 0
	msgsRes.ForEach(func(_, m gjson.Result) bool {
		total += messageSize(m)
		count++
		return true
	})
	if total <= maxChars || count > math.MaxInt32 {
		return body, 0, false
	}
	msgs := groupUnits(msgsRes, count)

	protected := msgs[len(msgs)-1].owner
	changed := false
	for i := 0; i < len(msgs) && total > maxChars; i++ {
		if msgs[i].owner != int32(i) || int32(i) == protected {
			continue
		}
		msgs[i].role |= roleRemoved
		changed = true
		total -= msgs[i].size
	}
	if !changed {
		return body, 0, false
	}

	arr := append(make([]byte, 0, len(msgsRes.Raw)), '[')
	i := 0
	msgsRes.ForEach(func(_, m gjson.Result) bool {
		o := msgs[i].owner
		i++
		if o >= 0 && msgs[o].role&roleRemoved != 0 {
			return true
		}
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		arr = append(arr, m.Raw...)
		return true
	})
	arr = append(arr, ']')
	next, err := sjson.SetRawBytes(body, "messages", arr)
	if err != nil {
		return body, 0, false
	}
	return next, int64(total), true
}

// groupUnits reads the messages into units, each message's size added to
// the first message of its unit. A tool message belongs to the earliest of
// the assistants that claim it: the one whose tool answers it directly
// follows, and the first earlier one that named its tool_call_id; a
// function message to the assistant with function_call it directly
// follows. (Assistants claim in order, oldest first, so the oldest claim
// wins.)
func groupUnits(msgsRes gjson.Result, count int) []trimMsg {
	msgs := make([]trimMsg, 0, count)
	var firstCaller map[string]int32       // tool_call_id → the first assistant that named it
	toolRun, fnRun := int32(-1), int32(-1) // the assistant whose answers directly follow
	msgsRes.ForEach(func(_, m gjson.Result) bool {
		i := int32(len(msgs))
		msg := trimMsg{size: messageSize(m), owner: i, role: roleOf(m)}
		// Its unit, then the assistant whose answers may follow it.
		switch msg.role {
		case roleKept:
			msg.owner = -1
			toolRun, fnRun = -1, -1
		case roleCalls:
			m.Get("tool_calls").ForEach(func(_, c gjson.Result) bool {
				if id := c.Get("id"); id.Type == gjson.String && id.Str != "" {
					if firstCaller == nil {
						firstCaller = make(map[string]int32)
					}
					if _, ok := firstCaller[id.Str]; !ok {
						firstCaller[id.Str] = i
					}
				}
				return true
			})
			toolRun, fnRun = i, -1
		case roleFuncCall:
			toolRun, fnRun = -1, i
		case roleTool:
			o := toolRun
			if id := m.Get("tool_call_id").Str; id != "" {
				if c, ok := firstCaller[id]; ok && (o < 0 || c < o) {
					o = c
				}
			}
			if o >= 0 {
				msg.owner = o
			}
			fnRun = -1
		case roleFunction:
			if fnRun >= 0 {
				msg.owner = fnRun
			}
			toolRun = -1
		default:
			toolRun, fnRun = -1, -1
		}
		if msg.owner >= 0 && msg.owner != i {
			msgs[msg.owner].size += msg.size
		}
		msgs = append(msgs, msg)
		return true
	})
	return msgs
}

// roleOf is a message's role as trimming tells them apart.
func roleOf(m gjson.Result) uint8 {
	switch m.Get("role").Str {
	case "system", "developer":
		return roleKept
	case "assistant":
		if calls := m.Get("tool_calls"); calls.IsArray() && calls.Get("#").Int() > 0 {
			return roleCalls
		}
		if m.Get("function_call").IsObject() {
			return roleFuncCall
		}
	case "tool":
		return roleTool
	case "function":
		return roleFunction
	}
	return roleOther
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
