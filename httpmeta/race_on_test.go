//go:build race

package httpmeta

// raceEnabled: the tests run under the race detector, where sync.Pool
// drops a quarter of what is put back (to shake out races), so a pooled
// object is sometimes allocated anew.
const raceEnabled = true
