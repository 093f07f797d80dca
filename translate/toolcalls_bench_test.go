package translate

import "testing"

// BenchmarkToolArguments is the cost per event of a streamed call's
// argument fragments with tool_arguments off (the default) and on:
// a long-lived rewriter, one event per write.
//
//	go test ./translate -run '^$' -bench ToolArguments -benchmem
func BenchmarkToolArguments(b *testing.B) {
	anthropic := []string{namedEvent("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}`)}
	for _, f := range []string{`{\"locati`, `on\": \"P`, `ar`, `is\"}`} {
		anthropic = append(anthropic, namedEvent("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"`+f+`"}}`))
	}
	for _, p := range []struct {
		name   string
		f      Format
		events []string
	}{
		{"chat", FormatSSE, benchToolEvents(20)},
		{"anthropic", FormatAnthropic, anthropic},
	} {
		for _, on := range []bool{false, true} {
			name := p.name + "/off"
			if on {
				name = p.name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				var ps [][]byte
				for _, e := range p.events {
					ps = append(ps, []byte(e))
				}
				rep := &Reply{Asked: Asked{ToolArguments: on}}
				runSSEBench(b, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Protocol: p.f, Reply: rep}, ps, 1)
			})
		}
	}
}
