package kube

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Write is what kube-apiserver did with one write request, as its own
// hooks saw it: the audit event (who, what, the authorization decision,
// the webhooks' annotations, the answer), every admission plugin that ran
// (an admission decorator), and the object it answered with (the
// innermost handler), which carries the revision etcd committed.
type Write struct {
	AuditID  string
	Received time.Time
	Duration time.Duration
	Verb     string // create, update, patch, delete, deletecollection
	// Resource is the plural, with "/subresource" when there is one;
	// Group is "" for the core group.
	Resource, Group, Namespace, Name string
	User                             string
	Groups                           []string
	// Authentication is how the user proved who they are: "x509 client
	// certificate", "service account token", ...
	Authentication string
	// Decision and Reason are the authorizer's: "allow", and for RBAC
	// `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`.
	Decision, Reason string
	// Admission is every admission plugin that handled the request, in the
	// order they ran: mutating first, then validating.
	Admission []AdmissionStep
	// Webhooks are what admission webhooks and policies recorded of the
	// request in its audit annotations, a line each in the order they ran.
	Webhooks []string
	// Key is where the object lives in etcd, Encoding how kube-apiserver
	// stores it there ("protobuf", or "json" for custom resources, then
	// the encryption provider and key when the encryption config covers
	// the resource).
	Key, Encoding string
	// Revision is the etcd revision the write committed at (the answered
	// object's resourceVersion); 0 when it did not commit.
	Revision int64
	// Code is the HTTP status the client got; Message the refusal's.
	Code    int
	Message string
}

// AdmissionStep is one admission plugin's part in a write.
type AdmissionStep struct {
	Plugin string
	// Phase is "mutating" or "validating".
	Phase    string
	Duration time.Duration
	// Mutated says a mutating plugin changed the object.
	Mutated bool
	// Refusal is the plugin's error; "" when it let the write through.
	Refusal string
}

// Refused names the stage that refused the write and why; "" when it
// succeeded.
func (w Write) Refused() (stage, why string) {
	if w.Code < 300 {
		return "", ""
	}
	for _, s := range w.Admission {
		if s.Refusal != "" {
			return s.Phase + " admission (" + s.Plugin + ")", s.Refusal
		}
	}
	switch {
	case w.Code == 401:
		return "authentication", w.Message
	case w.Decision == "forbid":
		// RBAC gives no reason for what it does not allow; the answer
		// says what was asked.
		if w.Reason != "" {
			return "authorization", w.Reason
		}
		return "authorization", w.Message
	case w.Code == 422:
		return "validation", w.Message
	case w.Code == 409:
		return "storage (the etcd transaction's precondition)", w.Message
	case w.Code == 429:
		return "API priority and fairness", w.Message
	}
	return "the request", w.Message
}

// pendingWrite is what the request's own hooks saw, waiting for its audit
// event.
type pendingWrite struct {
	since     time.Time
	admission []AdmissionStep
	body      []byte
	gzipped   bool
}

// maxPending bounds the writes waiting for their audit events; pendingTTL
// drops one whose event never came (a request the policy did not audit).
const (
	maxPending = 10000
	pendingTTL = 2 * time.Minute
)

// recorder joins each write's hooks into a Write and publishes it. It
// records only while someone subscribes: a headless control plane pays
// nothing for it.
type recorder struct {
	hub fanout.Hub[Write]
	// encryption is kube-apiserver's --encryption-provider-config, nil
	// without one: it says which values are stored encrypted, and how.
	encryption *decode.Encryption

	mu      sync.Mutex
	pending map[string]*pendingWrite
}

func newRecorder(encryption *decode.Encryption) *recorder {
	return &recorder{pending: map[string]*pendingWrite{}, encryption: encryption}
}

func (r *recorder) on() bool { return r.hub.Subscribers() > 0 }

// with runs f on the request's pending record, made when missing.
func (r *recorder) with(auditID string, f func(*pendingWrite)) {
	if auditID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[auditID]
	if p == nil {
		if len(r.pending) >= maxPending {
			r.sweep(time.Now())
			if len(r.pending) >= maxPending {
				return
			}
		}
		p = &pendingWrite{since: time.Now()}
		r.pending[auditID] = p
	}
	f(p)
}

// sweep drops records older than pendingTTL; r.mu is held.
func (r *recorder) sweep(now time.Time) {
	for id, p := range r.pending {
		if now.Sub(p.since) > pendingTTL {
			delete(r.pending, id)
		}
	}
}

// take removes and returns the request's pending record.
func (r *recorder) take(auditID string) *pendingWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[auditID]
	delete(r.pending, auditID)
	return p
}

// audited publishes the Write of a completed request's audit event.
func (r *recorder) audited(ev *auditv1.Event) {
	p := r.take(string(ev.AuditID))
	if !r.on() || ev.ObjectRef == nil {
		return
	}
	w := writeOf(ev)
	if p != nil {
		w.Admission = p.admission
		name, rev := answerOf(p.body, p.gzipped)
		w.Revision = rev
		if w.Name == "" && name != "" && ev.Verb == "create" && ev.ObjectRef.Subresource == "" {
			// A generateName create: the audit event has no name, the answer has.
			ref := *ev.ObjectRef
			ref.Name = name
			w.Name = name
			w.Key, w.Encoding = storageOf(&ref)
		}
	}
	if how := r.encryption.WritesWith(ev.ObjectRef.APIGroup, ev.ObjectRef.Resource); how != "" && w.Encoding != "" {
		w.Encoding += ", encrypted at rest with " + how
	}
	r.hub.Publish(w)
}

// writeOf reads a Write out of an audit event.
func writeOf(ev *auditv1.Event) Write {
	ref := ev.ObjectRef
	w := Write{
		AuditID:   string(ev.AuditID),
		Received:  ev.RequestReceivedTimestamp.Time,
		Duration:  ev.StageTimestamp.Sub(ev.RequestReceivedTimestamp.Time),
		Verb:      ev.Verb,
		Resource:  ref.Resource,
		Group:     ref.APIGroup,
		Namespace: ref.Namespace,
		Name:      ref.Name,
		User:      ev.User.Username,
		Groups:    ev.User.Groups,
		Decision:  ev.Annotations["authorization.k8s.io/decision"],
		Reason:    ev.Annotations["authorization.k8s.io/reason"],
	}
	if ref.Subresource != "" {
		w.Resource += "/" + ref.Subresource
	}
	w.Authentication = authenticationOf(ev.User.Extra)
	if ev.ResponseStatus != nil {
		w.Code, w.Message = int(ev.ResponseStatus.Code), ev.ResponseStatus.Message
	}
	w.Webhooks = admissionNotes(ev.Annotations)
	w.Key, w.Encoding = storageOf(ref)
	return w
}

// authenticationOf reads the credential kube-apiserver recorded for the
// user (the credential-id extra: "X509SHA256=...", "JTI=...").
func authenticationOf(extra map[string]authnv1.ExtraValue) string {
	for _, id := range extra["authentication.kubernetes.io/credential-id"] {
		switch {
		case strings.HasPrefix(id, "X509SHA256="):
			return "x509 client certificate"
		case strings.HasPrefix(id, "JTI="):
			return "service account token"
		}
	}
	if len(extra["authentication.kubernetes.io/pod-name"]) > 0 {
		return "service account token"
	}
	return ""
}

// storageOf is where kube-apiserver stores the object and how: built-in
// resources as protobuf under their storage prefix, the rest (custom
// resources) as JSON under /registry/<group>/<resource>/.
func storageOf(ref *auditv1.ObjectReference) (key, encoding string) {
	if !storedAtTheObject[ref.Subresource] {
		return "", "" // a token, an eviction, a proxy: nothing stored at a key of its own
	}
	name := ref.Resource
	if ref.APIGroup != "" {
		name += "." + ref.APIGroup
	}
	if ref.Name == "" {
		return "", ""
	}
	if r, ok := decode.LookupResource(name); ok && r.Group == ref.APIGroup {
		return r.KeyPrefix("", ref.Namespace) + ref.Name, "protobuf"
	}
	key = decode.DefaultPrefix + "/" + ref.APIGroup + "/" + ref.Resource + "/"
	if ref.Namespace != "" {
		key += ref.Namespace + "/"
	}
	return key + ref.Name, "json"
}

// storedAtTheObject are the subresources whose writes change the object's
// own value: "" (the object itself), its status, its binding to a node,
// its scale, its finalizers (namespaces), its approval (CSRs), its
// ephemeral containers and its resize (pods).
var storedAtTheObject = map[string]bool{"": true, "status": true, "binding": true, "scale": true,
	"finalize": true, "approval": true, "ephemeralcontainers": true, "resize": true}

// answerOf is the name and the resourceVersion of the object a write
// answered with.
func answerOf(body []byte, gzipped bool) (name string, rev int64) {
	if len(body) == 0 {
		return "", 0
	}
	if gzipped {
		var err error
		if body, err = gunzip(body); err != nil {
			return "", 0
		}
	}
	o := decode.Decoder{JSONOnly: true}.Decode("", body)
	if o.Object == nil {
		return "", 0
	}
	m, err := meta.Accessor(o.Object)
	if err != nil {
		return "", 0
	}
	rev, _ = strconv.ParseInt(m.GetResourceVersion(), 10, 64)
	return m.GetName(), rev
}
