// Package llmmeta registers llm_meta's Caddy modules when imported, which is
// what `xcaddy build --with github.com/llm-meta/llm_meta` does:
// http.handlers.llm_meta (package caddymodule) and the built-in demo gateway
// http.handlers.llm_meta_demo (package demogateway).
package llmmeta

import (
	_ "github.com/llm-meta/llm_meta/caddymodule"
	_ "github.com/llm-meta/llm_meta/demogateway"
)
