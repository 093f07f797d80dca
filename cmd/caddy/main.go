// Command caddy is Caddy with the standard modules and llm_meta built in,
// so the module can be built and run with plain `go build`, no xcaddy.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/llm-meta/llm_meta"
)

func main() {
	caddycmd.Main()
}
