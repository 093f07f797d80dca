package translate

// STUB: owned by the converters helper; replaced on merge.

// IsDataStreamLine reports whether line is a data stream part.
func IsDataStreamLine(line []byte) bool { return false }

// IsUIStreamEvent reports whether data is a UI message stream part.
func IsUIStreamEvent(data []byte) bool { return false }
