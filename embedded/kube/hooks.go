package kube

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
	genericapiserver "k8s.io/apiserver/pkg/server"
)

// recordAdmission is an admission decorator: it records every plugin's
// part in a write. It goes first among kube-apiserver's decorators, on
// the plugin itself, so that what the plugin is (mutating, validating or
// both) shows through.
func (r *recorder) recordAdmission(plugin admission.Interface, name string) admission.Interface {
	return &recordedPlugin{Interface: plugin, name: name, r: r}
}

type recordedPlugin struct {
	admission.Interface
	name string
	r    *recorder
}

func (p *recordedPlugin) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	m, ok := p.Interface.(admission.MutationInterface)
	if !ok {
		return nil
	}
	if !p.r.on() || !m.Handles(a.GetOperation()) {
		return m.Admit(ctx, a, o)
	}
	var before runtime.Object
	if obj := a.GetObject(); obj != nil {
		before = obj.DeepCopyObject()
	}
	start := time.Now()
	err := m.Admit(ctx, a, o)
	step := AdmissionStep{Plugin: p.name, Phase: "mutating", Duration: time.Since(start)}
	step.Mutated = before != nil && !equality.Semantic.DeepEqual(before, a.GetObject())
	p.record(ctx, step, err)
	return err
}

func (p *recordedPlugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	v, ok := p.Interface.(admission.ValidationInterface)
	if !ok {
		return nil
	}
	if !p.r.on() || !v.Handles(a.GetOperation()) {
		return v.Validate(ctx, a, o)
	}
	start := time.Now()
	err := v.Validate(ctx, a, o)
	p.record(ctx, AdmissionStep{Plugin: p.name, Phase: "validating", Duration: time.Since(start)}, err)
	return err
}

func (p *recordedPlugin) record(ctx context.Context, step AdmissionStep, err error) {
	if err != nil {
		step.Refusal = err.Error()
	}
	p.r.with(audit.GetAuditIDTruncated(ctx), func(w *pendingWrite) { w.admission = append(w.admission, step) })
}

// maxCapturedBody bounds the copy of an answer kept for its revision: an
// object is at most etcd's request limit, a little over 1.5 MiB.
const maxCapturedBody = 4 << 20

// recordAnswers wraps the handler chain's innermost handler, where the
// request has passed authentication, authorization and audit: it keeps a
// copy of what a write answers, the object with the revision etcd
// committed, for the recorder to read off the request path.
func (r *recorder) recordAnswers(build func(http.Handler, *genericapiserver.Config) http.Handler) func(http.Handler, *genericapiserver.Config) http.Handler {
	return func(api http.Handler, c *genericapiserver.Config) http.Handler {
		inner := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if !r.on() || req.Method == http.MethodGet {
				api.ServeHTTP(w, req)
				return
			}
			c := &capture{ResponseWriter: w}
			api.ServeHTTP(responsewriter.WrapForHTTP1Or2(c), req)
			if c.code >= 200 && c.code < 300 && c.body.Len() > 0 && !c.overflow {
				gz := w.Header().Get("Content-Encoding") == "gzip"
				r.with(audit.GetAuditIDTruncated(req.Context()), func(p *pendingWrite) {
					p.body, p.gzipped = c.body.Bytes(), gz
				})
			}
		})
		return build(inner, c)
	}
}

// capture copies what passes through a ResponseWriter.
type capture struct {
	http.ResponseWriter
	code     int
	body     bytes.Buffer
	overflow bool // the answer was larger than maxCapturedBody
}

func (c *capture) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	if c.body.Len()+len(b) <= maxCapturedBody {
		c.body.Write(b)
	} else {
		c.overflow = true
	}
	return c.ResponseWriter.Write(b)
}

func (c *capture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, maxCapturedBody*4))
}
