package translate

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// writeSizes records the size of every Write it gets.
type writeSizes struct {
	bytes.Buffer
	sizes []int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

// TestConvertedWriteBounded: one upstream write of 32 KiB of tiny parts
// (reverse_proxy's buffer) becomes chunks of over a hundred bytes each; they
// go out in writes of about convFlushAt bytes, never held all at once
// (SPEC 8.1), and none is lost.
func TestConvertedWriteBounded(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		open       func(out *writeSizes) io.WriteCloser
	}{
		{"data stream", `0:"a"` + "\n", func(out *writeSizes) io.WriteCloser {
			return NewDataStreamConverter(out, ConvertOptions{Model: "m", MaxLine: 1 << 20, Reply: new(Reply)})
		}},
		{"UI stream", `data: {"type":"text-delta","id":"0","delta":"a"}` + "\n\n", func(out *writeSizes) io.WriteCloser {
			return NewUIStreamConverter(out, ConvertOptions{Model: "m", MaxLine: 1 << 20, Reply: new(Reply)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := (32 << 10) / len(tc.part)
			out := new(writeSizes)
			c := tc.open(out)
			if _, err := c.Write([]byte(strings.Repeat(tc.part, n))); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			for _, s := range out.sizes {
				if s > convFlushAt+1024 {
					t.Errorf("one write of %d bytes: the chunks of the whole upstream write were held", s)
					break
				}
			}
			if got := strings.Count(out.String(), `"content":"a"`); got != n {
				t.Errorf("%d content chunks written of %d", got, n)
			}
		})
	}
}
