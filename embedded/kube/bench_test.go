package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// benchWorkers is how many clients create concurrently on each path.
const benchWorkers = 8

// BenchmarkCreates compares creates per second through the in-process
// kube-apiserver (client-go, 8 workers: authentication, RBAC, admission,
// validation, protobuf encoding, the etcd txn, the audit backends) with
// the same through a standalone kube-apiserver process built from the
// same k8s.io/kubernetes (bench/cmd/kube-apiserver) with the same flags,
// on the same etcd, and with the same objects put straight into etcd by 8
// workers with kube-apiserver's optimistic create (a txn that puts only if
// the key does not exist). standalone reports in-process/standalone,
// etcd-put apiserver/etcd.
//
//	go test ./embedded/kube/ -run '^$' -bench Creates -benchtime 2000x
func BenchmarkCreates(b *testing.B) {
	var server, direct float64
	b.Run("apiserver", func(b *testing.B) {
		server = createsThrough(b, testCP.RESTConfig(AdminUser))
	})
	b.Run("standalone", func(b *testing.B) {
		cfg := startStandalone(b)
		standalone := createsThrough(b, cfg)
		if server > 0 {
			b.ReportMetric(server/standalone, "inprocess/standalone")
		}
	})
	b.Run("etcd-put", func(b *testing.B) {
		etcd := etcdClient(b)
		codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
			StorageMediaType:  "application/vnd.kubernetes.protobuf", // kube-apiserver's default
			StorageSerializer: scheme.Codecs,
			StorageVersion:    corev1.SchemeGroupVersion, MemoryVersion: corev1.SchemeGroupVersion,
		})
		check(b, err)
		run := fmt.Sprint(b.N, "-", benchRun.Add(1))
		direct = parallelCreates(b, func(ctx context.Context, i int64) error {
			cm := benchConfigMap(i)
			cm.Namespace, cm.UID, cm.CreationTimestamp = "bench", "00000000-0000-0000-0000-000000000000", metav1.Now()
			value, err := runtime.Encode(codec, cm)
			if err != nil {
				return err
			}
			key := "/bench-direct/" + run + "/configmaps/bench/" + cm.Name
			resp, err := etcd.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).Then(clientv3.OpPut(key, string(value))).Commit()
			if err == nil && !resp.Succeeded {
				err = fmt.Errorf("%s exists", key)
			}
			return err
		})
		if server > 0 {
			b.ReportMetric(server/direct, "apiserver/etcd")
		}
	})
}

var benchRun atomic.Int64

// createsThrough creates ConfigMaps in a namespace of their own through
// the server cfg reaches, and reports creates per second.
func createsThrough(b *testing.B, cfg *rest.Config) float64 {
	cfg.QPS = -1 // no client-side rate limit: the server is what is measured
	cs, err := kubernetes.NewForConfig(cfg)
	check(b, err)
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-"}}, metav1.CreateOptions{})
	check(b, err)
	return parallelCreates(b, func(ctx context.Context, i int64) error {
		_, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, benchConfigMap(i), metav1.CreateOptions{})
		return err
	})
}

// standalone is the standalone kube-apiserver, started once per process.
var standalone struct {
	sync.Once
	cfg *rest.Config
	err error
	cmd *exec.Cmd
	dir string
}

// stopStandalone ends the standalone kube-apiserver, if one ran.
func stopStandalone() {
	if standalone.cmd != nil && standalone.cmd.Process != nil {
		_ = standalone.cmd.Process.Kill()
		_ = standalone.cmd.Wait()
	}
	if standalone.dir != "" {
		_ = os.RemoveAll(standalone.dir)
	}
}

// startStandalone builds bench/cmd/kube-apiserver and runs it with the
// in-process server's flags on a port of its own, beside it on the same
// etcd (two kube-apiservers of one cluster, as in an HA control plane),
// until the process ends.
func startStandalone(b *testing.B) *rest.Config {
	standalone.Do(func() {
		dir, err := os.MkdirTemp("", "kube-apiserver-bench-")
		if err != nil {
			standalone.err = err
			return
		}
		standalone.dir = dir
		bin := filepath.Join(dir, "kube-apiserver")
		build := exec.Command("go", "build", "-o", bin, "github.com/etcdscope/etcdscope/bench/cmd/kube-apiserver")
		if out, err := build.CombinedOutput(); err != nil {
			standalone.err = fmt.Errorf("go build kube-apiserver: %v\n%s", err, out)
			return
		}
		port, err := embedded.FreePorts(1)
		if err != nil {
			standalone.err = err
			return
		}
		flags, err := testCP.apiServerFlags(testOptions)
		if err != nil {
			standalone.err = err
			return
		}
		cmd := exec.Command(bin, append(flags, "--secure-port="+strconv.Itoa(port[0]))...)
		if cmd.Stderr, err = os.Create(filepath.Join(dir, "kube-apiserver.log")); err != nil {
			standalone.err = err
			return
		}
		if standalone.err = cmd.Start(); standalone.err != nil {
			return
		}
		standalone.cmd = cmd
		cfg := testCP.RESTConfig(AdminUser)
		cfg.Host = "https://127.0.0.1:" + strconv.Itoa(port[0])
		cs, err := kubernetes.NewForConfig(cfg)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			err = waitReady(ctx, cs)
		}
		standalone.cfg, standalone.err = cfg, err
	})
	check(b, standalone.err)
	return rest.CopyConfig(standalone.cfg)
}

// parallelCreates runs b.N creates over benchWorkers goroutines and
// reports, and returns, creates per second.
func parallelCreates(b *testing.B, create func(context.Context, int64) error) float64 {
	ctx := context.Background()
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	b.ResetTimer()
	for range benchWorkers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := create(ctx, i); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "creates/s")
	return rate
}

func benchConfigMap(i int64) *corev1.ConfigMap {
	data := map[string]string{}
	for k := range 8 {
		data[fmt.Sprint("key-", k)] = fmt.Sprintf("value %d of object %d", k, i)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i), Labels: map[string]string{"bench": "creates"}},
		Data:       data,
	}
}

func check(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
