package translate

import "testing"

func TestOtherModel(t *testing.T) {
	cases := []struct {
		reply, request string
		other          bool
	}{
		{"", "gpt-4o", false},
		{"gpt-4o", "gpt-4o", false},
		{"gpt-4o-2024-08-06", "gpt-4o", false},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", false},
		{"gpt-4o-mini", "gpt-4o", true},
		{"gpt-4o-2024-8-06", "gpt-4o", true},
		{"gpt-4o-2024-08-06x", "gpt-4o", true},
		{"gpt-4o-202408", "gpt-4o", true},
		{"gpt-4o_2024-08-06", "gpt-4o", true},
		{"gpt-5-nano-2025-08-07", "my-deployment", true},
		{"gpt-4o", "", true},
		{"openai/gpt-4o", "openrouter/auto", true},
	}
	for _, c := range cases {
		if got := OtherModel(c.reply, c.request); got != c.other {
			t.Errorf("OtherModel(%q, %q) = %v, want %v", c.reply, c.request, got, c.other)
		}
	}
}
