package translate

import "strings"

// OtherModel reports whether the model a reply names is another model than
// the one the request asked for (SPEC 11.2): a non-empty name that is not
// the request's, nor the request's followed by a date ("gpt-4o-2024-08-06"
// for "gpt-4o": a dated snapshot of the same model). With no model in the
// request, any name the reply gives is another.
func OtherModel(reply, request string) bool {
	if reply == "" || reply == request {
		return false
	}
	if request == "" {
		return true
	}
	date, ok := strings.CutPrefix(reply, request)
	return !ok || !isDateSuffix(date)
}

// isDateSuffix reports whether s is "-" and a date, as snapshots are named:
// four digits, then "-" two digits "-" two digits, or four more digits
// ("-2024-08-06", "-20250929"). It is not checked as a calendar date.
func isDateSuffix(s string) bool {
	switch len(s) {
	case len("-2024-08-06"):
		return s[0] == '-' && digits(s[1:5]) && s[5] == '-' && digits(s[6:8]) && s[8] == '-' && digits(s[9:])
	case len("-20250929"):
		return s[0] == '-' && digits(s[1:])
	}
	return false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
