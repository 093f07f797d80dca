package linearcheck

import (
	"testing"
	"time"
)

// The clock counts the work done, not the time waited: 20 ms asleep,
// which wall time would count whole, cost (almost) nothing on it.
func TestThreadClockCountsWorkNotWaits(t *testing.T) {
	now, stop := startClock()
	defer stop()
	start := now()
	quadraticWork(bytesOf(3000))
	if worked := now() - start; worked <= 0 {
		t.Fatalf("work cost %d ns on the clock", worked)
	}
	start = now()
	time.Sleep(20 * time.Millisecond)
	if waited := now() - start; waited > int64(5*time.Millisecond) {
		t.Fatalf("20 ms asleep cost %d ns on the clock", waited)
	}
}
