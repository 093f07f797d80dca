package translate

import "io"

// STUB: owned by the converters helper; replaced on merge.

type DataStreamConverter struct{ out io.Writer }

func NewDataStreamConverter(out io.Writer, opts ConvertOptions) *DataStreamConverter {
	return &DataStreamConverter{out}
}
func (c *DataStreamConverter) Write(p []byte) (int, error) { return len(p), nil }
func (c *DataStreamConverter) Close() error                { return nil }

type UIStreamConverter struct{ out io.Writer }

func NewUIStreamConverter(out io.Writer, opts ConvertOptions) *UIStreamConverter {
	return &UIStreamConverter{out}
}
func (c *UIStreamConverter) Write(p []byte) (int, error) { return len(p), nil }
func (c *UIStreamConverter) Close() error                { return nil }
