//go:build !race

package httpmeta

// raceEnabled: see race_on_test.go.
const raceEnabled = false
