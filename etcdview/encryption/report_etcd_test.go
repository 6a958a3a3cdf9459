package encryption

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
	kmsv2mock "k8s.io/apiserver/pkg/storage/value/encrypt/envelope/testing/v2"
)

// secretOf is a key's secret of 32 bytes, base64 as the config holds it.
func secretOf(b byte) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(b), 32)))
}

var (
	aescbcKey1   = fmt.Sprintf("aescbc: {keys: [{name: key1, secret: %s}]}", secretOf('1'))
	aesgcmKey    = fmt.Sprintf("aesgcm: {keys: [{name: gcm1, secret: %s}]}", secretOf('g'))
	secretboxKey = fmt.Sprintf("secretbox: {keys: [{name: sb1, secret: %s}]}", secretOf('s'))
)

// kmsProvider is a KMS v2 provider of the fake plugin on socket.
func kmsProvider(socket string) string {
	return fmt.Sprintf("kms: {apiVersion: v2, name: fake-kms, endpoint: unix://%s, timeout: 5s}", socket)
}

// encryptionConfig is an EncryptionConfiguration of one rule per entry:
// resources → providers, in order.
func encryptionConfig(rules ...[2][]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n")
	for _, r := range rules {
		fmt.Fprintf(&b, "  - resources: [\"%s\"]\n    providers:\n", strings.Join(r[0], `", "`))
		for _, p := range r[1] {
			fmt.Fprintf(&b, "      - %s\n", p)
		}
	}
	return b.String()
}

func rule(resources []string, providers ...string) [2][]string {
	return [2][]string{resources, providers}
}

// transformers are the value transformers kube-apiserver builds from
// config, with k8s.io/apiserver's own encryptionconfig.
func transformers(t *testing.T, config string) map[schema.GroupResource]value.Transformer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, "etcdscope-test")
	if err != nil {
		t.Fatal(err)
	}
	return c.Transformers
}

// writer puts objects into etcd as kube-apiserver stores them: protobuf,
// through the transformer of the object's resource.
type writer struct {
	t   *testing.T
	cli *clientv3.Client
	rev int64
}

// put writes obj through tr (nil: plain); a KMS v2 transformer refuses
// writes until it has its first key from the plugin, so refusals are
// retried until a deadline.
func (w *writer) put(tr value.Transformer, obj runtime.Object) {
	w.t.Helper()
	key, err := etcdviewtest.Key(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	data, err := etcdviewtest.Encode(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	if tr != nil {
		data = w.transform(tr, key, data)
	}
	w.putRaw(key, data)
}

func (w *writer) transform(tr value.Transformer, key string, data []byte) []byte {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := tr.TransformToStorage(ctx, data, value.DefaultContext(key))
		if err == nil {
			return out
		}
		select {
		case <-ctx.Done():
			w.t.Fatalf("transform %s: %v", key, err)
		case <-tick.C:
		}
	}
}

func (w *writer) putRaw(key string, data []byte) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := w.cli.Put(ctx, key, string(data))
	if err != nil {
		w.t.Fatalf("put %s: %v", key, err)
	}
	w.rev = resp.Header.Revision
}

func secret(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string][]byte{"k": []byte("v")}}
}

func deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

func serviceAccount(name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
}

var (
	secrets         = schema.GroupResource{Resource: "secrets"}
	configmaps      = schema.GroupResource{Resource: "configmaps"}
	deployments     = schema.GroupResource{Group: "apps", Resource: "deployments"}
	pods            = schema.GroupResource{Resource: "pods"}
	serviceaccounts = schema.GroupResource{Resource: "serviceaccounts"}
)

// fixture is the store after a cluster's encryption config changed many
// times: each resource's values written by kube-apiserver's transformers
// under the configs it had, and checkedConfig, its config now.
type fixture struct {
	rev    int64
	config *decode.Encryption
	// want counts "resource|label|status".
	want map[string]int64
	// unreadableSecret is the Secret under a key the config lost.
	unreadableSecret string
}

const kmsV1Secret = "/registry/secrets/default/kms-v1"

func writeFixture(t *testing.T, cli *clientv3.Client) fixture {
	t.Helper()
	dir, err := os.MkdirTemp("", "kms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "kms.sock")
	kmsv2mock.NewBase64Plugin(t, socket)

	// The configs the cluster had, one after the other.
	past := transformers(t, encryptionConfig(
		rule([]string{"secrets", "configmaps", "serviceaccounts"}, aescbcKey1),
		rule([]string{"deployments.apps", "pods"}, secretboxKey),
	))
	gcm := transformers(t, encryptionConfig(rule([]string{"secrets", "pods"}, aesgcmKey)))
	kms := transformers(t, encryptionConfig(rule([]string{"secrets"}, kmsProvider(socket))))
	w := &writer{t: t, cli: cli}
	for i := range 3 {
		w.put(past[secrets], secret(fmt.Sprintf("cbc-%d", i)))
	}
	for i := range 2 {
		w.put(gcm[secrets], secret(fmt.Sprintf("gcm-%d", i)))
		w.put(kms[secrets], secret(fmt.Sprintf("kms-%d", i)))
		w.put(nil, secret(fmt.Sprintf("plain-%d", i)))
		w.put(past[deployments], deployment(fmt.Sprintf("sb-%d", i)))
		w.put(nil, pod(fmt.Sprintf("plain-%d", i)))
		w.put(past[serviceaccounts], serviceAccount(fmt.Sprintf("cbc-%d", i)))
	}
	sb := transformers(t, encryptionConfig(rule([]string{"secrets"}, secretboxKey)))
	w.put(sb[secrets], secret("sb"))
	w.put(past[configmaps], etcdviewtest.ConfigMap("cbc"))
	for i := range 4 {
		w.put(nil, etcdviewtest.ConfigMap(fmt.Sprintf("plain-%d", i)))
	}
	w.put(nil, deployment("plain"))
	w.put(gcm[pods], pod("gcm"))
	// KMS v1 is off in kube-apiserver since 1.29 (its KMSv1 gate): its
	// values are written here as it wrote them, prefix then the envelope.
	w.putRaw(kmsV1Secret, []byte("k8s:enc:kms:v1:old-kms:\x00\x20"+strings.Repeat("d", 32)+"ciphertext"))
	// A key below the prefix that holds no object.
	w.putRaw("/registry/pods", []byte("not an object"))

	checked, err := decode.ParseEncryptionConfig([]byte(encryptionConfig(
		rule([]string{"secrets"}, kmsProvider(socket), aescbcKey1, aesgcmKey, "identity: {}"),
		rule([]string{"configmaps", "serviceaccounts"}, aescbcKey1),
		rule([]string{"*.apps"}, "identity: {}", secretboxKey),
	)))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{rev: w.rev, config: checked, unreadableSecret: "/registry/secrets/default/sb", want: map[string]int64{
		`secrets|KMS v2 provider "fake-kms"|written`:   2,
		`secrets|aescbc key "key1"|older`:              3,
		`secrets|aesgcm key "gcm1"|older`:              2,
		`secrets|identity|older`:                       2,
		`secrets|secretbox key "sb1"|unreadable`:       1,
		`secrets|KMS v1 provider "old-kms"|unreadable`: 1,
		`configmaps|aescbc key "key1"|written`:         1,
		`configmaps|identity|unreadable`:               4,
		`serviceaccounts|aescbc key "key1"|written`:    2,
		`deployments.apps|identity|written`:            1,
		`deployments.apps|secretbox key "sb1"|older`:   2,
		`pods|identity|written`:                        2,
		`pods|aesgcm key "gcm1"|unreadable`:            1,
	}}
}

func counted(r *Report) map[string]int64 {
	got := map[string]int64{}
	for _, res := range r.Resources {
		for _, s := range res.Stored {
			got[res.Name()+"|"+s.Label+"|"+string(s.Status)] += s.Count
		}
	}
	return got
}

func run(t *testing.T, src etcdview.Source, opts Options) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Run(ctx, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunCountsValuesOfTheAPIServersTransformers writes values with
// k8s.io/apiserver's own aescbc, aesgcm, secretbox and KMS v2 (through its
// fake plugin) transformers, under several configs, and expects every
// value counted by resource, provider and key, each against the config of
// now: live and from a snapshot on every etcd, live and from its SQLite
// file on kine.
func TestRunCountsValuesOfTheAPIServersTransformers(t *testing.T) {
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		f := writeFixture(t, e.Client)
		checkSource(t, "live", etcdview.NewLive(e.Client, 0), f, 1)
		file, err := etcdview.OpenFileWith(etcdviewtest.SaveSnapshot(t, e.Client), etcdview.FileOptions{NoIndexFile: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { file.Close() })
		checkSource(t, "snapshot", file, f, 1)
	})
	t.Run("kine", func(t *testing.T) {
		k := etcdtest.StartKine(t, etcdtest.KineOptions{})
		f := writeFixture(t, k.Client(t))
		// kine serves /registry/health, which holds no object, of its
		// own; its file reader leaves it out with kine's other rows.
		checkSource(t, "live", etcdview.NewLive(k.Client(t), 0), f, 2)
		k.Stop()
		file, err := etcdview.OpenOffline(k.DB, etcdview.FileOptions{NoIndexFile: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { file.Close() })
		checkSource(t, "state.db", file, f, 1)
	})
}

// checkSource runs the report on src, which holds f and wantOther keys
// that are no object, with f's config, with none, and on one resource.
func checkSource(t *testing.T, what string, src etcdview.Source, f fixture, wantOther int64) {
	t.Helper()
	var wantValues int64
	for _, n := range f.want {
		wantValues += n
	}
	r := run(t, src, Options{Config: f.config})
	if got := counted(r); !maps.Equal(got, f.want) {
		t.Errorf("%s: counted\n%s\nwant\n%s", what, dump(got), dump(f.want))
	}
	if r.Values != wantValues || r.Other != wantOther || r.Revision != f.rev {
		t.Errorf("%s: %d values, %d other keys at revision %d; want %d, %d at %d", what, r.Values, r.Other, r.Revision, wantValues, wantOther, f.rev)
	}
	if !r.Failed() || r.Count(Older) != 9 || r.Count(Unreadable) != 7 {
		t.Errorf("%s: failed %v, %d older, %d unreadable; want true, 9, 7", what, r.Failed(), r.Count(Older), r.Count(Unreadable))
	}
	checkWritesWith(t, what, r)
	checkFindings(t, what, r, f)

	plain := run(t, src, Options{})
	if plain.Failed() || plain.Count(Unknown) != wantValues || plain.Resources[0].WritesWith != "" {
		t.Errorf("%s, no config: failed %v, %d unknown of %d, writes %q; want a pass, every value unknown, no write key",
			what, plain.Failed(), plain.Count(Unknown), wantValues, plain.Resources[0].WritesWith)
	}
	covered := run(t, src, Options{Config: f.config, Prefix: "/registry/serviceaccounts/"})
	if covered.Failed() || covered.Count(Written) != 2 || len(covered.Findings()) != 0 {
		t.Errorf("%s, serviceaccounts only: failed %v, %d written, findings %v; want a pass with both values written", what, covered.Failed(), covered.Count(Written), covered.Findings())
	}
}

func checkWritesWith(t *testing.T, what string, r *Report) {
	t.Helper()
	want := map[string]string{
		"secrets":          `KMS v2 provider "fake-kms"`,
		"configmaps":       `aescbc key "key1"`,
		"serviceaccounts":  `aescbc key "key1"`,
		"deployments.apps": Identity,
		"pods":             Identity,
	}
	for _, res := range r.Resources {
		if res.WritesWith != want[res.Name()] {
			t.Errorf("%s: %s writes with %q, want %q", what, res.Name(), res.WritesWith, want[res.Name()])
		}
	}
}

// checkFindings: each way of storing that the write key does not cover is
// one finding, whose guidance says what to do for that case and names the
// keys.
func checkFindings(t *testing.T, what string, r *Report, f fixture) {
	t.Helper()
	byRow := map[string]Finding{}
	for _, fd := range r.Findings() {
		byRow[fd.Resource+"|"+fd.Stored.Label] = fd
	}
	if len(byRow) != 8 {
		t.Errorf("%s: %d findings, want the 8 rows not written with the write key", what, len(byRow))
	}
	cases := []struct{ row, says string }{
		{`secrets|identity`, "stored plain, while the config writes secrets with KMS v2"},
		{`secrets|aescbc key "key1"`, "an older key the config still reads"},
		{`secrets|secretbox key "sb1"`, "which the config no longer has for secrets: kube-apiserver cannot read them"},
		{`secrets|KMS v1 provider "old-kms"`, "which the config no longer lists for secrets"},
		{`configmaps|identity`, "have no identity: kube-apiserver cannot read them"},
		{`deployments.apps|secretbox key "sb1"`, "while the config writes deployments.apps plain"},
	}
	for _, c := range cases {
		fd, ok := byRow[c.row]
		switch {
		case !ok:
			t.Errorf("%s: no finding for %s", what, c.row)
		case !strings.Contains(fd.Text, c.says) || !strings.Contains(fd.Text, "| kubectl replace -f -"):
			t.Errorf("%s: %s: guidance %q, want %q and the kubectl replace line", what, c.row, fd.Text, c.says)
		}
	}
	if got := byRow[`secrets|secretbox key "sb1"`].Stored.Keys; !slices.Equal(got, []string{f.unreadableSecret}) {
		t.Errorf("%s: the unreadable secretbox Secret is named as %q, want %q", what, got, f.unreadableSecret)
	}
	if got := byRow[`secrets|aescbc key "key1"`].Stored.Keys; len(got) != MaxExamples {
		t.Errorf("%s: 3 older aescbc Secrets named as %q, want %d of them", what, got, MaxExamples)
	}
}

func dump(m map[string]int64) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, fmt.Sprintf("  %s: %d", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// TestRunHoldsBoundedRowsOfAHostileStore: a store of more resources than
// MaxRows, with names and keys far longer than any real one, is counted
// whole, in at most MaxRows rows of capped names.
func TestRunHoldsBoundedRowsOfAHostileStore(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	var keys []string
	for i := range MaxRows + 100 {
		keys = append(keys, fmt.Sprintf("/registry/r%d-%s/x", i, strings.Repeat("n", 300)))
	}
	etcdviewtest.PutKeys(t, cli, keys, "k8s:enc:aescbc:v1:"+strings.Repeat("k", 1000)+":ciphertext")
	long := "/registry/secrets/default/" + strings.Repeat("s", 100_000)
	w := &writer{t: t, cli: cli}
	w.putRaw(long, []byte("k8s\x00plain"))
	r := run(t, etcdview.NewLive(cli, 0), Options{Config: &decode.Encryption{}})
	rows, listed := 0, int64(0)
	for _, res := range r.Resources {
		if len(res.Resource) > MaxName {
			t.Fatalf("a resource name of %d bytes kept, want at most %d", len(res.Resource), MaxName)
		}
		for _, s := range res.Stored {
			rows++
			listed += s.Count
			if len(s.KeyName) > MaxName || len(s.Label) > MaxName+len(`aescbc key ""`) {
				t.Fatalf("a key name of %d bytes kept (label %d), want at most %d", len(s.KeyName), len(s.Label), MaxName)
			}
			for _, k := range s.Keys {
				if len(k) > MaxExampleKey+len("…") {
					t.Fatalf("an example key of %d bytes kept, want at most %d", len(k), MaxExampleKey)
				}
			}
		}
	}
	unlisted := r.Unlisted[Unreadable] + r.Unlisted[Written]
	if rows != MaxRows || listed+unlisted != int64(len(keys)+1) || r.Values != int64(len(keys)+1) {
		t.Errorf("%d rows holding %d values, %d unlisted, of %d; want %d rows and every value counted", rows, listed, unlisted, r.Values, MaxRows)
	}
	if !r.Failed() || r.Count(Unreadable) != int64(len(keys)) {
		t.Errorf("failed %v, %d unreadable; want true, %d (aescbc values where the config writes plain and has no key)", r.Failed(), r.Count(Unreadable), len(keys))
	}
}
