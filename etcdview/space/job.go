package space

import (
	"context"
	"sync"
	"sync/atomic"
)

// Job is a report read in the background, for a screen that draws while it
// reads: it polls Progress, waits on Done, and reads Result; Cancel stops
// it. A refresh is a new Job with the last report's Options.
type Job struct {
	cancel   context.CancelFunc
	done     chan struct{}
	progress atomic.Pointer[Progress]
	once     sync.Once
	report   *Report
	err      error
}

// Start reads the report opts ask for from src in a goroutine of its own,
// until it is done, Cancel is called or ctx ends.
func Start(ctx context.Context, src Source, opts Options) *Job {
	ctx, cancel := context.WithCancel(ctx)
	j := &Job{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		defer cancel()
		j.report, j.err = Run(ctx, src, opts, func(p Progress) { j.progress.Store(&p) })
	}()
	return j
}

// Progress is how far the read is; the zero Progress before the first
// batch.
func (j *Job) Progress() Progress {
	if p := j.progress.Load(); p != nil {
		return *p
	}
	return Progress{}
}

// Done is closed when the job has ended, done, failed or cancelled.
func (j *Job) Done() <-chan struct{} { return j.done }

// Result waits for the job to end and returns its report, or why there is
// none (context.Canceled after Cancel).
func (j *Job) Result() (*Report, error) {
	<-j.done
	return j.report, j.err
}

// Cancel stops the read; Result then returns the error it ended with.
func (j *Job) Cancel() { j.once.Do(j.cancel) }
