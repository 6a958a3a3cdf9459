package embedded

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStartToReady measures Start of a fresh cluster until every member
// serves clients; Close is outside the timed part.
func BenchmarkStartToReady(b *testing.B) {
	for _, members := range []int{1, 3} {
		b.Run(map[int]string{1: "members=1", 3: "members=3"}[members], func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				c, err := Start(ctx, Options{Members: members})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}
