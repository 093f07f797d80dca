package httpmeta

import (
	"strings"

	"github.com/llm-meta/llm_meta/translate"
)

// View shows an exchange's figures to readers that may come after Serve
// returned, such as Caddy's access log reading placeholders: while the
// exchange runs it reads them from the exchange, and when it ends it keeps
// a copy of them, because the exchange's memory is then used again.
type View struct {
	ex     *Exchange // nil once the exchange ended
	wanted bool      // View was called: the figures are kept when it ends
	kept   summary
	// modelBuf holds kept.model when it fits: the View is allocated for
	// each request anyway, and a copy of its own would be one more
	// allocation per reply. 48 bytes hold the models of the usual
	// providers (an OpenRouter name with its variant) and keep the
	// request's lasting part in the 240-byte size class.
	modelBuf [48]byte
}

// summary is what a View keeps of an ended exchange.
type summary struct {
	mode    Mode
	format  translate.Format
	tools   string
	usage   translate.Usage
	cost    float64
	hasCost bool
	cut     bool   // the stream was interrupted (SPEC 11.1)
	model   string // the model the reply named (SPEC 11.2)
}

// View returns the exchange's view. It stays valid after the request.
func (st *Exchange) View() *View {
	v := &st.x.last.view
	v.wanted = true
	return v
}

// end keeps the figures of the ending exchange, when anyone took its view:
// without an observer that does, copying the tools' text would be an
// allocation per reply for nothing.
func (v *View) end() {
	st := v.ex
	v.ex = nil
	if !v.wanted {
		return
	}
	rep := st.Reply()
	v.kept = summary{
		mode:    st.Mode(),
		format:  st.Format(),
		tools:   strings.Clone(rep.Meta.ToolsPlaceholder()),
		usage:   rep.Usage,
		cost:    rep.Cost,
		hasCost: rep.HasCost,
		cut:     rep.Interrupted,
		// A copy (the record's memory is used again), in the View's own
		// memory when it fits.
		model: translate.StringIn(v.modelBuf[:], rep.Model),
	}
}

// Mode is what the handler did with the reply.
func (v *View) Mode() Mode {
	if v.ex != nil {
		return v.ex.Mode()
	}
	return v.kept.mode
}

// Format is the reply's format, as far as it is known.
func (v *View) Format() translate.Format {
	if v.ex != nil {
		return v.ex.Format()
	}
	return v.kept.format
}

// Tools is the tools_used placeholder's text. It is a copy: the meta's own
// text lives in the exchange's memory.
func (v *View) Tools() string {
	if v.ex != nil {
		return strings.Clone(v.ex.Reply().Meta.ToolsPlaceholder())
	}
	return v.kept.tools
}

// Usage is the reply's token usage (translate.Usage.Known says whether it
// reported any).
func (v *View) Usage() translate.Usage {
	if v.ex != nil {
		return v.ex.Reply().Usage
	}
	return v.kept.usage
}

// Cost is the reply's cost in US dollars, when known.
func (v *View) Cost() (usd float64, ok bool) {
	if v.ex != nil {
		rep := v.ex.Reply()
		return rep.Cost, rep.HasCost
	}
	return v.kept.cost, v.kept.hasCost
}

// Interrupted reports whether the stream ended before its protocol's end
// (SPEC 11.1).
func (v *View) Interrupted() bool {
	if v.ex != nil {
		return v.ex.Reply().Interrupted
	}
	return v.kept.cut
}

// ModelServed is the model the reply named, "" when it named none (SPEC
// 11.2). The record's string is its own copy, kept as it is.
func (v *View) ModelServed() string {
	if v.ex != nil {
		return v.ex.Reply().Model
	}
	return v.kept.model
}
