package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	clientv3 "go.etcd.io/etcd/client/v3"
	_ "modernc.org/sqlite" // registers the driver "sqlite", to read the recording
)

// The record figure's goals, issue 26's: it keeps up with etcd's maximum
// write rate on these machines (the tail figure's writer, about 8,700
// puts/s on a quiet machine), in bounded memory, in a file little larger
// than what it holds.
const (
	recordMaxLag  = time.Second
	recordMinRate = 8700
	recordMaxRSS  = 150e6
	recordMaxSize = 1.2
)

// recordFigure runs the real `etcdscope record` as a process of its own,
// under GNU time, below the prefix of the tail figure's writers, twice.
// First beside them, at etcd's maximum rate: the lag of each put, from its
// answer to the commit that holds it in the file (the file's head,
// polled). Then, stopped while they write as much again, started anew on
// its file: the rate at which it catches up on the backlog etcd then
// holds is the most it records, whatever rate the writers reach on a
// machine shared with others. Then the recorder's peak RSS, every put in
// the file, and the file's size over the bytes of the keys and values it
// holds, once the recorder ended on SIGINT and folded its log.
func recordFigure(e env, d time.Duration) row {
	const figure = "record beside a writer at etcd's maximum rate"
	goal := fmt.Sprintf("lag < %v, catching up ≥ %d events/s, peak RSS ≤ %.0f MB, file ≤ %g× its keys and values, no event lost",
		recordMaxLag, recordMinRate, recordMaxRSS/1e6, recordMaxSize)
	res, err := measureRecord(e, d)
	if err != nil {
		return failed(figure, goal, err)
	}
	ratio := float64(res.fileBytes) / float64(res.kvBytes)
	return row{
		figure: fmt.Sprintf("%s for %v, then a backlog of as long (`record --out FILE PREFIX`)", figure, d),
		ours: fmt.Sprintf("lag max %v, p99 %v; catching up %.0f events/s; %.0f MiB peak RSS; file %s; %d events, %d lost",
			res.maxLag.Round(time.Millisecond), res.p99.Round(time.Millisecond), res.catchUp, res.peak/(1<<20),
			humanize.IBytes(uint64(res.fileBytes)), res.events, res.lost),
		theirs: fmt.Sprintf("%.0f puts/s beside it; %s of keys and values in the file", res.rate, humanize.IBytes(uint64(res.kvBytes))),
		ratio:  fmt.Sprintf("%.2f", ratio),
		goal:   goal,
		met: res.maxLag < recordMaxLag && res.catchUp >= recordMinRate && res.peak <= recordMaxRSS &&
			ratio <= recordMaxSize && res.lost == 0 && res.events > 0,
		measured: true,
	}
}

type recordResult struct {
	events, lost       int
	rate               float64 // the writers' puts/s beside the recorder
	maxLag, p99        time.Duration
	catchUp            float64 // events/s
	peak               float64 // bytes, the larger of the two runs'
	fileBytes, kvBytes int64
}

// headSample is the recording's head as the file said it at a moment.
type headSample struct {
	at   time.Time
	head int64
}

func measureRecord(e env, d time.Duration) (recordResult, error) {
	var res recordResult
	writer, err := clientv3.New(clientv3.Config{Endpoints: []string{e.endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return res, err
	}
	defer writer.Close()
	prefix := fmt.Sprintf("/registry/leases/bench-record-%d/", time.Now().UnixNano())
	// The fill is kept for the next run, as the tail figure keeps it.
	defer writer.Delete(context.Background(), prefix, clientv3.WithPrefix())
	path := filepath.Join(e.tmp, "record.db")
	written, err := res.beside(e, writer, path, prefix, d)
	if err != nil {
		return res, err
	}
	// The backlog: as many seconds of puts with no recorder.
	w := startTailWriters(context.Background(), writer, prefix, d)
	<-w.done
	if err := res.catchingUp(e, path, prefix, w); err != nil {
		return res, err
	}
	maps.Copy(written, w.written)
	return res, res.readFile(path, prefix, written)
}

// beside records while the writers put, and returns when each put was
// answered.
func (res *recordResult) beside(e env, writer *clientv3.Client, path, prefix string, d time.Duration) (map[int64]time.Time, error) {
	rec, db, err := startRecording(e, path, prefix)
	if err != nil {
		return nil, err
	}
	defer rec.stop()
	defer db.Close()
	// The snapshot (of an empty prefix) is committed before the writes
	// start: what follows is the stream alone.
	if _, err := rec.waitHead(db, 1, time.Now().Add(time.Minute)); err != nil {
		return nil, fmt.Errorf("record's first snapshot: %w", err)
	}
	w := startTailWriters(context.Background(), writer, prefix, d)
	samples, polled := pollHead(db, w.done)
	<-w.done
	<-polled
	tail, err := rec.waitHead(db, lastOf(w.written), time.Now().Add(30*time.Second))
	if err != nil {
		return nil, fmt.Errorf("record after the writes: %w", err)
	}
	res.rate = float64(w.puts.Load()) / d.Seconds()
	res.lags(w.written, append(*samples, tail))
	return w.written, res.stop(rec, db)
}

// catchingUp starts the recorder again on its file, after w's puts, and
// times it from its first commit after its head to the one that holds the
// last put; when one commit held them all, from its start.
func (res *recordResult) catchingUp(e env, path, prefix string, w *tailLoad) error {
	head, err := headOf(path)
	if err != nil {
		return err
	}
	started := headSample{time.Now(), head}
	rec, db, err := startRecording(e, path, prefix)
	if err != nil {
		return err
	}
	defer rec.stop()
	defer db.Close()
	first, err := rec.waitHead(db, head+1, time.Now().Add(time.Minute))
	var last headSample
	if err == nil {
		last, err = rec.waitHead(db, lastOf(w.written), time.Now().Add(5*time.Minute))
	}
	if err != nil {
		return fmt.Errorf("record catching up: %w", err)
	}
	if last.head == first.head {
		first = started
	}
	res.catchUp = float64(last.head-first.head) / last.at.Sub(first.at).Seconds()
	return res.stop(rec, db)
}

// headOf is the head of the recording at path, no recorder running.
func headOf(path string) (int64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return fileHead(db)
}

// stop ends rec after db, a reader of its file, closed: the recorder folds
// its log into the file when the last connection to it closes.
func (res *recordResult) stop(rec *recorder, db *sql.DB) error {
	db.Close()
	peak, err := rec.stop()
	res.peak = max(res.peak, peak)
	return err
}

// startRecording starts the recorder on the file at path, and opens the
// file for reading beside it.
func startRecording(e env, path, prefix string) (*recorder, *sql.DB, error) {
	rec, err := startRecorder(e, path, prefix)
	if err != nil {
		return nil, nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		rec.stop()
		return nil, nil, err
	}
	return rec, db, nil
}

func lastOf(written map[int64]time.Time) int64 {
	var last int64
	for rev := range written {
		last = max(last, rev)
	}
	return last
}

// recorder is `etcdscope record` running under GNU time.
type recorder struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{} // closed when it ended; then peak and err are set
	peak   float64
	err    error
	once   sync.Once
}

func startRecorder(e env, path, prefix string) (*recorder, error) {
	args := e.etcdscopeCmd("record", "--out", path, prefix)
	r := &recorder{cmd: exec.Command(args[0], args[1:]...), done: make(chan struct{})}
	r.cmd.Stderr = &r.stderr
	// Its own process group: GNU time ignores SIGINT while it waits, so the
	// signal goes to the group, and reaches the recorder.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	wait, err := startMeasured(r.cmd)
	if err != nil {
		return nil, err
	}
	go func() {
		defer close(r.done)
		r.peak, r.err = wait()
	}()
	return r, nil
}

// waitHead waits until the recording is whole up to rev, while the
// recorder runs, and returns the sample that showed it.
func (r *recorder) waitHead(db *sql.DB, rev int64, deadline time.Time) (headSample, error) {
	for {
		select {
		case <-r.done:
			return headSample{}, fmt.Errorf("etcdscope record ended: %v\n%s", r.err, r.stderr.String())
		default:
		}
		if h, err := fileHead(db); err == nil && h >= rev {
			return headSample{time.Now(), h}, nil
		}
		if time.Now().After(deadline) {
			return headSample{}, fmt.Errorf("the recording is not whole up to revision %d in time", rev)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the recorder with SIGINT, after which it commits what it read,
// and returns its peak RSS.
func (r *recorder) stop() (float64, error) {
	r.once.Do(func() {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-r.done:
		case <-time.After(time.Minute):
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
		}
	})
	if r.err != nil {
		return 0, fmt.Errorf("etcdscope record: %w\n%s", r.err, r.stderr.String())
	}
	return r.peak, nil
}

// fileHead is the revision the recording is whole up to, as record keeps
// it (etcdscope_record's head).
func fileHead(db *sql.DB) (int64, error) {
	var head int64
	err := db.QueryRow(`SELECT value FROM etcdscope_record WHERE name = 'head'`).Scan(&head)
	return head, err
}

// pollHead samples the file's head every 20 ms until stop closes; polled
// closes after the last sample.
func pollHead(db *sql.DB, stop <-chan struct{}) (samples *[]headSample, polled <-chan struct{}) {
	samples = new([]headSample)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if h, err := fileHead(db); err == nil {
					*samples = append(*samples, headSample{time.Now(), h})
				}
			}
		}
	}()
	return samples, done
}

// lags are, for each put, the time from its answer to the first sample of
// the file's head that holds it: within 20 ms of its commit.
func (res *recordResult) lags(written map[int64]time.Time, samples []headSample) {
	var lags []time.Duration
	for rev, at := range written {
		i := sort.Search(len(samples), func(i int) bool { return samples[i].head >= rev })
		if i == len(samples) {
			continue // not recorded: readFile counts it lost
		}
		// The recorder may commit a put before its writer noted the answer.
		lags = append(lags, max(samples[i].at.Sub(at), 0))
	}
	res.maxLag, res.p99 = quantiles(lags)
}

// readFile reads what the ended recorder left: each put's row, and the
// file's size over the bytes of the keys and values of its rows.
func (res *recordResult) readFile(path, prefix string, written map[int64]time.Time) error {
	if _, err := os.Stat(path + "-wal"); err == nil {
		return errors.New("the recorder left its write-ahead log: it did not close the file")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	res.fileBytes = fi.Size()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT SUM(LENGTH(CAST(name AS BLOB)) + COALESCE(LENGTH(value), 0)) FROM kine`).Scan(&res.kvBytes); err != nil {
		return err
	}
	rows, err := db.Query(`SELECT id FROM kine WHERE name >= ? AND name < ?`, prefix, clientv3.GetPrefixRangeEnd(prefix))
	if err != nil {
		return err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	res.events = len(written)
	// kube-apiserver's puts and these write one key a revision: a row's id
	// is its revision.
	for rev := range written {
		if _, ok := slices.BinarySearch(ids, rev); !ok {
			res.lost++
		}
	}
	return rows.Err()
}
