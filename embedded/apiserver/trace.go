package apiserver

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/embedded/fanout"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
)

// WriteTrace is one write request as it went through the server: who made
// it, what it touched, and how long each stage of the write path took.
type WriteTrace struct {
	Start    time.Time
	Verb     string // create, update, patch, delete, deletecollection
	Resource string // e.g. "pods", "deployments", "pods/status"
	// Namespace and Name are empty for collection requests and
	// cluster-scoped objects respectively.
	Namespace, Name string
	User            string
	// Key is the etcd key written; empty when the request failed before storage.
	Key string
	// Stages are in the order they ran; a request refused early has fewer.
	Stages []Stage
	// EncodedBytes is the size of the protobuf value before encryption,
	// StoredBytes the size of what was put into etcd (they differ when
	// encryption at rest applies).
	EncodedBytes, StoredBytes int
	// Revision is the etcd revision the write committed at, 0 if none.
	Revision int64
	// Code is the HTTP status code the client got.
	Code int
}

// Stage is one step of the write path.
type Stage struct {
	Name     string // StageAuthn, StageAuthz, ...
	Duration time.Duration
}

// The stage names, in the order the write path runs them.
const (
	StageAuthn    = "authn"
	StageAuthz    = "authz"
	StageMutate   = "mutate"   // mutating admission (schema defaults are applied while decoding, before it)
	StageValidate = "validate" // strategy validation and validating admission
	StageEncode   = "encode"   // protobuf encoding into the storage version
	StageEtcd     = "etcd txn" // encryption (if any), the etcd transaction and Raft commit
)

// traceRecorder collects the stages of one request. Several goroutines of
// the handler chain (the timeout filter runs the handler on its own) touch
// it, hence the mutex.
type traceRecorder struct {
	mu sync.Mutex
	t  WriteTrace
	// mutateEnd and storageStart bound the validate stage; tryUpdateEnd
	// marks where an update's validation ends and encoding starts.
	mutateEnd, storageStart, tryUpdateEnd, transformStart time.Time
}

type traceKey struct{}

func recorderFrom(ctx context.Context) *traceRecorder {
	r, _ := ctx.Value(traceKey{}).(*traceRecorder)
	return r
}

func (r *traceRecorder) stage(name string, start time.Time) {
	if r == nil {
		return
	}
	d := time.Since(start)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.t.Stages {
		if r.t.Stages[i].Name == name { // admission runs once per plugin kind; retries add up
			r.t.Stages[i].Duration += d
			return
		}
	}
	r.t.Stages = append(r.t.Stages, Stage{Name: name, Duration: d})
}

func (r *traceRecorder) update(f func(r *traceRecorder)) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

// finish derives the stages measured as gaps between marks and returns the
// trace.
func (r *traceRecorder) finish(code int) WriteTrace {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.t
	t.Stages = append([]Stage(nil), r.t.Stages...)
	t.Code = code
	if !r.transformStart.IsZero() {
		validateEnd := r.storageStart // create: validation ran before the storage call
		encodeStart := r.storageStart
		if !r.tryUpdateEnd.IsZero() { // update: validation ran inside GuaranteedUpdate
			validateEnd, encodeStart = r.tryUpdateEnd, r.tryUpdateEnd
		}
		if !r.mutateEnd.IsZero() && validateEnd.After(r.mutateEnd) {
			t.Stages = append(t.Stages, Stage{StageValidate, validateEnd.Sub(r.mutateEnd)})
		}
		t.Stages = append(t.Stages, Stage{StageEncode, r.transformStart.Sub(encodeStart)})
	}
	slices.SortStableFunc(t.Stages, func(a, b Stage) int {
		return slices.Index(stageOrder, a.Name) - slices.Index(stageOrder, b.Name)
	})
	return t
}

var stageOrder = []string{StageAuthn, StageAuthz, StageMutate, StageValidate, StageEncode, StageEtcd}

// withWriteTrace is the outermost filter: it gives every write request a
// recorder that the authenticator, authorizer, admission and storage
// wrappers below fill in, and publishes the trace when the request ends.
func withWriteTrace(next http.Handler, h *fanout.Hub[WriteTrace]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			next.ServeHTTP(w, req)
			return
		}
		rec := &traceRecorder{t: WriteTrace{Start: time.Now()}}
		cw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(responsewriter.WrapForHTTP1Or2(cw), req.WithContext(context.WithValue(req.Context(), traceKey{}, rec)))
		h.Publish(rec.finish(cw.code))
	})
}

// codeWriter remembers the status code written.
type codeWriter struct {
	http.ResponseWriter
	code int
	once sync.Once
}

func (w *codeWriter) WriteHeader(code int) {
	w.once.Do(func() { w.code = code })
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
