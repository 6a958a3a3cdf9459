package ui

import "time"

// rateWindow is how far back the header's event rate looks. A second, the
// pace of the status readings, reads 0.0 on a calm cluster between two
// writes, and whenever a reading comes late (a du read keeps etcd busy);
// ten seconds of the tail's own arrivals do neither.
const rateWindow = 10 * time.Second

// rateEvery is the least time between two samples: a busy watch hands
// over many batches a second, and the window needs only a few.
const rateEvery = 100 * time.Millisecond

// rateSample is the tail's event count at a time.
type rateSample struct {
	at    time.Time
	total uint64
}

// rateMeter is the tail's events a second over rateWindow, from samples
// taken as batches arrive and at each status reading (so that it falls
// when none arrive).
type rateMeter struct{ samples []rateSample }

// observe samples total at at; the oldest sample kept is the newest one at
// least rateWindow old, the base of the rate.
func (r *rateMeter) observe(at time.Time, total uint64) {
	if n := len(r.samples); n > 0 {
		last := r.samples[n-1]
		if at.Before(last.at) {
			at = last.at
		}
		if n > 1 && at.Sub(r.samples[n-2].at) < rateEvery {
			r.samples[n-1] = rateSample{at, total}
			return
		}
	}
	r.samples = append(r.samples, rateSample{at, total})
	cut := 0
	for cut+1 < len(r.samples) && !r.samples[cut+1].at.After(at.Add(-rateWindow)) {
		cut++
	}
	r.samples = r.samples[cut:]
}

// rate is the events a second between the oldest and newest samples.
func (r *rateMeter) rate() float64 {
	if len(r.samples) < 2 {
		return 0
	}
	first, last := r.samples[0], r.samples[len(r.samples)-1]
	d := last.at.Sub(first.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(last.total-first.total) / d
}
