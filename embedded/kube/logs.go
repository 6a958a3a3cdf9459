package kube

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
)

// klogTarget is where klog writes: the log of the control plane started
// last. klog is the three components' logger and is one per process. With
// a logr backend set, klog writes nothing itself, not even the errors it
// otherwise copies to stderr, so nothing reaches the terminal. The backend
// is set once, at init: klog.SetLogger is not safe while anything logs.
var klogTarget struct {
	sync.Mutex
	w io.Writer
}

func init() {
	klogTarget.w = io.Discard
	klog.SetLogger(funcr.New(func(prefix, args string) {
		klogTarget.Lock()
		defer klogTarget.Unlock()
		fmt.Fprintln(klogTarget.w, time.Now().Format(time.RFC3339Nano), prefix, args)
	}, funcr.Options{}))
}

// redirectLogs sends klog to w; nil discards.
func redirectLogs(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	klogTarget.Lock()
	defer klogTarget.Unlock()
	klogTarget.w = w
}
