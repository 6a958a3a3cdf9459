package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ownersArgs is etcdscope owners connected by conn, with args.
func ownersArgs(conn []string, args ...string) []string {
	return append(append([]string{"owners"}, conn...), args...)
}

// ownersJSON runs owners args -o json on conn and reads the tree it prints.
func ownersJSON(t *testing.T, conn []string, args ...string) ownerTreeDoc {
	t.Helper()
	var doc ownerTreeDoc
	if err := json.Unmarshal([]byte(run(t, ownersArgs(conn, append([]string{"-o", "json"}, args...)...)...)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// findingsJSON runs owners --orphans args -o json on conn and reads the
// findings.
func findingsJSON(t *testing.T, conn []string, args ...string) []ownerFindingDoc {
	t.Helper()
	var doc ownerFindingsDoc
	if err := json.Unmarshal([]byte(run(t, ownersArgs(conn, append([]string{"--orphans", "-o", "json"}, args...)...)...)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Findings
}

// path is the chain of kind/name/uid from the root down the first
// dependent at each level.
func (n ownerNodeDoc) path() []string {
	out := []string{n.Kind + "/" + n.Name + "/" + n.UID}
	if len(n.Dependents) > 0 {
		out = append(out, n.Dependents[0].path()...)
	}
	return out
}

func TestOwnersOnAKubernetes17DataFile(t *testing.T) {
	db := kube17 + "boltdb-db"
	var pod metav1.PartialObjectMetadata
	if err := json.Unmarshal([]byte(run(t, "get", "--db", db, "po", "pi-dqtsw", "-o", "json")), &pod); err != nil {
		t.Fatal(err)
	}
	var job metav1.PartialObjectMetadata
	if err := json.Unmarshal([]byte(run(t, "get", "--db", db, "job", "pi", "-o", "json")), &job); err != nil {
		t.Fatal(err)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != job.UID {
		t.Fatalf("the fixture's pod is not owned by its job: %+v", pod.OwnerReferences)
	}

	out := run(t, "owners", "--db", db, "job", "pi")
	want := [][]string{
		{"NAMESPACE", "NAME", "REVISION", "AGE", "KEY", "STATE"},
		{"default", "Job/pi", "82703", "/registry/jobs/default/pi", "this", "object"},
		{"default", "└─", "Pod/pi-dqtsw", "82702", "/registry/pods/default/pi-dqtsw"},
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("tree of the job:\n%s", out)
	}
	age := regexp.MustCompile(`^[0-9]+[ydhms][0-9a-z]*$`)
	for i, w := range want {
		got := slices.DeleteFunc(strings.Fields(lines[i]), age.MatchString)
		if !slices.Equal(got, w) || strings.HasSuffix(lines[i], " ") {
			t.Errorf("line %d = %q, want the cells %q and no trailing space", i, lines[i], w)
		}
	}

	doc := ownersJSON(t, []string{"--db", db}, "po", "pi-dqtsw")
	if len(doc.Roots) != 1 || doc.Revision != 241828 {
		t.Fatalf("tree of the pod: %+v", doc)
	}
	got := doc.Roots[0].path()
	if w := []string{"Job/pi/" + string(job.UID), "Pod/pi-dqtsw/" + string(pod.UID)}; !slices.Equal(got, w) {
		t.Errorf("path %q, want %q", got, w)
	}
	if p := doc.Roots[0].Dependents[0]; !p.Target || p.Reference == nil || !p.Reference.Controller || p.Reference.State != "owner exists" {
		t.Errorf("the pod's node %+v, want the target, with a controller reference to an existing owner", p)
	}
	if f := findingsJSON(t, []string{"--db", db}); len(f) != 0 {
		t.Errorf("findings in a healthy store: %+v", f)
	}
}

func TestOwnersRefusesBadInput(t *testing.T) {
	db := kube17 + "boltdb-db"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no object", nil, "give a KEY, or a RESOURCE and a NAME, or --orphans"},
		{"resource without a name", []string{"pods"}, "pods: give the NAME of the object too"},
		{"key with a name", []string{"/registry/pods/default/pi-dqtsw", "x"}, "a key takes no NAME"},
		{"key with a namespace", []string{"/registry/pods/default/pi-dqtsw", "-n", "x"}, "-n goes with a RESOURCE NAME or --orphans"},
		{"orphans of one object", []string{"--orphans", "po", "pi-dqtsw"}, "--orphans lists the whole store"},
		{"orphans as a tree", []string{"--orphans", "-o", "tree"}, "--orphans prints a table"},
		{"unknown output", []string{"po", "pi-dqtsw", "-o", "yaml"}, `unknown output format "yaml": want tree or json`},
		{"negative revision", []string{"po", "pi-dqtsw", "--rev", "-1"}, "--rev -1: want 0 (the newest) or more"},
		{"unknown key", []string{"/registry/pods/default/nope"}, "/registry/pods/default/nope does not exist at revision 241828"},
		{"unknown name", []string{"po", "nope"}, `pods "nope" not found in namespace default at revision 241828 (no key /registry/pods/default/nope)`},
		{"unknown resource", []string{"gadgets", "g"}, `unknown resource type "gadgets"`},
		{"an event", []string{"/registry/events/default/pi.1"}, "is an Event: the garbage collector ignores Events"},
		{"compacted revision", []string{"job", "pi", "--rev", "5"}, "revision 5 has been compacted: the oldest revision etcd still holds is 241828"},
		{"compacted revision of the orphans", []string{"--orphans", "--rev", "5"}, "revision 5 has been compacted: the oldest revision etcd still holds is 241828"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := runFails(t, append([]string{"owners", "--db", db}, tc.args...)...)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want it to say %q", msg, tc.want)
			}
		})
	}
}

// waitUntil polls ok until it holds, and fails the test after a minute
// with what it waited for.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// kubeObjects is what `kubectl get args -o json` prints, one object or a
// List, metadata only.
func kubeObjects(t *testing.T, k *kubectl, args ...string) []metav1.PartialObjectMetadata {
	t.Helper()
	out := []byte(k.run(t, append([]string{"get", "-o", "json"}, args...)...))
	var list struct {
		metav1.PartialObjectMetadata
		Items []metav1.PartialObjectMetadata
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" {
		return []metav1.PartialObjectMetadata{list.PartialObjectMetadata}
	}
	return list.Items
}

// gone says whether kubectl finds no object args names.
func gone(t *testing.T, k *kubectl, args ...string) bool {
	_, errOut, code := k.output(t, append([]string{"get"}, args...)...)
	return code != 0 && strings.Contains(errOut, "NotFound")
}

func writeOwnersManifest(t *testing.T, name, manifest string) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const ownersDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: owners-web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: owners-web}}
  template:
    metadata: {labels: {app: owners-web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`

// TestOwnersFollowsTheGarbageCollector runs the bundled control plane as a
// child process (kube-controller-manager, and its garbage collector, start
// once per process), and checks owners against what the real controllers
// and kubectl do: a Deployment's ReplicaSet and Pods matched by uid; what
// kubectl delete --cascade=orphan leaves; an orphan the collector deletes,
// read at the revision it existed; a foreground deletion held by a
// dependent's finalizer.
func TestOwnersFollowsTheGarbageCollector(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	p := startServe(t, "--apiserver", "--members", "1")
	k.kubeconfig = exportVar(t, p.export, "KUBECONFIG")
	ep := p.conn()

	k.run(t, "apply", "-f", writeOwnersManifest(t, "deploy.yaml", ownersDeployment))
	rs, pods := waitOwned(t, k, "")
	deploy := kubeObjects(t, k, "deployment", "owners-web")[0]
	t.Run("a Deployment's ReplicaSet and Pods by uid", func(t *testing.T) {
		checkWorkload(t, ep, &deploy, rs, pods)
		doc := ownersJSON(t, ep, "pod", pods[1].Name)
		want := []string{"Deployment/owners-web/" + string(deploy.UID), "ReplicaSet/" + rs.Name + "/" + string(rs.UID), "Pod/" + pods[1].Name + "/" + string(pods[1].UID)}
		if len(doc.Roots) != 1 || !slices.Equal(doc.Roots[0].path(), want) || len(doc.Roots[0].Dependents[0].Dependents) != 1 {
			t.Errorf("tree of a pod: %+v, want the one path %q", doc.Roots, want)
		}
		out := run(t, ownersArgs(ep, "deploy", "owners-web")...)
		for _, w := range []string{"Deployment/owners-web", "└─ ReplicaSet/" + rs.Name, "├─ Pod/" + pods[0].Name, "└─ Pod/" + pods[1].Name} {
			if !strings.Contains(out, w) {
				t.Errorf("tree lacks %q:\n%s", w, out)
			}
		}
	})

	// The collector removes the ReplicaSet from its Pods' references; the
	// Deployment controller makes a ReplicaSet of the same name again,
	// which adopts the same Pods.
	k.run(t, "delete", "rs", rs.Name, "--cascade=orphan")
	again, adopted := waitOwned(t, k, string(rs.UID))
	t.Run("a ReplicaSet deleted with --cascade=orphan is replaced, and its Pods adopted", func(t *testing.T) {
		if again.Name != rs.Name || !slices.EqualFunc(adopted, pods, func(a, b metav1.PartialObjectMetadata) bool { return a.UID == b.UID }) {
			t.Fatalf("after the orphaning delete: %s with pods %v, want %s with the same pods", again.Name, adopted, rs.Name)
		}
		checkWorkload(t, ep, &deploy, again, adopted)
	})

	// Orphaned on purpose: the collector removes the references, and
	// nothing lists the ReplicaSet or its Pods as orphans.
	k.run(t, "delete", "deployment", "owners-web", "--cascade=orphan")
	waitUntil(t, "deletion of the Deployment", func() bool { return gone(t, k, "deployment", "owners-web") })
	t.Run("a Deployment deleted with --cascade=orphan leaves a ReplicaSet that is a root", func(t *testing.T) {
		if refs := kubeObjects(t, k, "rs", again.Name)[0].OwnerReferences; len(refs) != 0 {
			t.Fatalf("the ReplicaSet still has owners: %+v", refs)
		}
		checkWorkload(t, ep, nil, again, adopted)
		if f := findingsJSON(t, ep, "-n", "default"); len(f) != 0 {
			t.Errorf("findings after orphaning deletes: %+v", f)
		}
	})
	k.run(t, "delete", "rs", again.Name, "--cascade=orphan")
	waitUntil(t, "deletion of the ReplicaSet", func() bool { return gone(t, k, "rs", again.Name) })
	t.Run("Pods whose ReplicaSet was deleted with --cascade=orphan own themselves", func(t *testing.T) {
		code, out, errOut := runCommand(t, ownersArgs(ep, "pod", pods[0].Name)...)
		if code != 0 || !strings.Contains(errOut, "has no ownerReferences") || strings.Count(out, "\n") != 2 {
			t.Errorf("owners of a released pod: exit %d\n%s%s", code, out, errOut)
		}
		if f := findingsJSON(t, ep, "-n", "default"); len(f) != 0 {
			t.Errorf("released pods are listed: %+v", f)
		}
	})

	t.Run("an orphan the collector deletes, read at the revision it existed", func(t *testing.T) { checkOrphan(t, k, ep) })
	t.Run("a foreground deletion held by a blocking dependent", func(t *testing.T) { checkBlocked(t, k, ep) })
}

// waitOwned waits for the ReplicaSet of owners-web, of a uid other than
// old, to own two Pods, and returns them, the Pods by name.
func waitOwned(t *testing.T, k *kubectl, old string) (rs metav1.PartialObjectMetadata, pods []metav1.PartialObjectMetadata) {
	t.Helper()
	waitUntil(t, "ReplicaSet owning two Pods", func() bool {
		sets := kubeObjects(t, k, "rs", "-l", "app=owners-web")
		pods = kubeObjects(t, k, "pods", "-l", "app=owners-web")
		if len(sets) != 1 || string(sets[0].UID) == old || len(pods) != 2 {
			return false
		}
		rs = sets[0]
		for _, p := range pods {
			if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != rs.UID {
				return false
			}
		}
		return true
	})
	slices.SortFunc(pods, func(a, b metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	return rs, pods
}

// checkWorkload checks the tree of the ReplicaSet: from the Deployment
// (nil: none, the ReplicaSet is the root) down to its Pods, by uid.
func checkWorkload(t *testing.T, ep []string, deploy *metav1.PartialObjectMetadata, rs metav1.PartialObjectMetadata, pods []metav1.PartialObjectMetadata) {
	t.Helper()
	doc := ownersJSON(t, ep, "rs", rs.Name)
	if len(doc.Roots) != 1 {
		t.Fatalf("%d roots, want 1: %+v", len(doc.Roots), doc.Roots)
	}
	node := doc.Roots[0]
	if deploy != nil {
		if node.Kind != "Deployment" || node.UID != string(deploy.UID) || len(node.Dependents) != 1 {
			t.Fatalf("root %s/%s uid %s, want the Deployment %s with one dependent", node.Kind, node.Name, node.UID, deploy.UID)
		}
		node = node.Dependents[0]
		if r := node.Reference; r == nil || !r.Controller || !r.BlockOwnerDeletion || r.State != "owner exists" {
			t.Errorf("the ReplicaSet's reference: %+v", r)
		}
	}
	if node.Kind != "ReplicaSet" || node.UID != string(rs.UID) || !node.Target || (deploy == nil) != (node.Reference == nil) {
		t.Fatalf("node %s/%s uid %s (target %v), want the ReplicaSet %s", node.Kind, node.Name, node.UID, node.Target, rs.UID)
	}
	var got, want []string
	for _, d := range node.Dependents {
		got = append(got, fmt.Sprintf("%s/%s/%s", d.Kind, d.Name, d.UID))
	}
	for _, p := range pods {
		want = append(want, fmt.Sprintf("Pod/%s/%s", p.Name, p.UID))
	}
	if !slices.Equal(got, want) {
		t.Errorf("dependents of the ReplicaSet %q, want %q", got, want)
	}
}

const ownersOrphan = `apiVersion: v1
kind: ConfigMap
metadata:
  name: owners-orphan
  namespace: default
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: never-was, uid: 6d1f0c52-0000-4000-8000-00000000dead}
`

// checkOrphan creates a ConfigMap owned by a uid no object has: --orphans
// lists it at the revision it was created at, the collector deletes it,
// and at the newest revision nothing is left to list.
func checkOrphan(t *testing.T, k *kubectl, ep []string) {
	rv := k.run(t, "create", "-f", writeOwnersManifest(t, "orphan.yaml", ownersOrphan), "-o", "jsonpath={.metadata.resourceVersion}")
	waitUntil(t, "deletion of the orphan by the garbage collector", func() bool { return gone(t, k, "cm", "owners-orphan") })

	findings := findingsJSON(t, ep, "--rev", rv, "-n", "default")
	if len(findings) != 1 {
		t.Fatalf("findings at revision %s: %+v, want the orphan", rv, findings)
	}
	f := findings[0]
	if f.Kind != "ConfigMap" || f.Name != "owners-orphan" || f.Problem != "orphan" ||
		f.Why != "owner ReplicaSet/never-was (uid 6d1f0c52-0000-4000-8000-00000000dead) (no object has this uid); the garbage collector deletes it" {
		t.Errorf("finding %+v", f)
	}
	doc := ownersJSON(t, ep, "--rev", rv, "cm", "owners-orphan")
	if len(doc.Roots) != 1 || !doc.Roots[0].Missing || doc.Roots[0].Kind != "ReplicaSet" || doc.Roots[0].Dependents[0].Name != "owners-orphan" {
		t.Errorf("tree of the orphan: %+v, want it below the missing ReplicaSet", doc.Roots)
	}
	if f := findingsJSON(t, ep, "-n", "default"); len(f) != 0 {
		t.Errorf("findings after the collector deleted the orphan: %+v", f)
	}
	if msg := runFails(t, ownersArgs(ep, "cm", "owners-orphan")...); !strings.Contains(msg, `configmaps "owners-orphan" not found`) {
		t.Errorf("owners of the deleted orphan: %s", msg)
	}
}

const ownersBlocker = `apiVersion: v1
kind: Pod
metadata:
  name: owners-blocker
  namespace: default
  finalizers: [example.com/keep]
  ownerReferences:
  - {apiVersion: v1, kind: ConfigMap, name: owners-owner, uid: %s, blockOwnerDeletion: true}
spec: {containers: [{name: c, image: nginx:1.27}]}
`

// checkBlocked deletes a ConfigMap in the foreground while a Pod it owns,
// with blockOwnerDeletion, is held by a finalizer of its own: the owner
// waits, the Pod blocks it, until the finalizer goes.
func checkBlocked(t *testing.T, k *kubectl, ep []string) {
	k.run(t, "create", "configmap", "owners-owner")
	uid := kubeObjects(t, k, "cm", "owners-owner")[0].UID
	k.run(t, "create", "-f", writeOwnersManifest(t, "blocker.yaml", fmt.Sprintf(ownersBlocker, uid)))
	k.run(t, "delete", "cm", "owners-owner", "--cascade=foreground", "--wait=false")
	waitUntil(t, "deletion of the blocking Pod by the garbage collector", func() bool {
		return kubeObjects(t, k, "pod", "owners-blocker")[0].DeletionTimestamp != nil
	})

	got := map[string]string{}
	for _, f := range findingsJSON(t, ep, "-n", "default") {
		got[f.Kind+"/"+f.Name+" "+f.Problem] = f.Why
	}
	if why := got["ConfigMap/owners-owner waits-for-dependents"]; !strings.Contains(why, "waits for 1 dependent(s) with blockOwnerDeletion to go") {
		t.Errorf("the owner's finding: %q (all: %v)", why, got)
	}
	if why := got["Pod/owners-blocker blocks-deletion"]; !strings.Contains(why, "blocks the foreground deletion of ConfigMap/owners-owner") ||
		!strings.Contains(why, "held by finalizers example.com/keep") {
		t.Errorf("the blocker's finding: %q (all: %v)", why, got)
	}
	if len(got) != 2 {
		t.Errorf("findings %v, want the owner's and the blocker's", got)
	}
	out := run(t, ownersArgs(ep, "cm", "owners-owner")...)
	if !strings.Contains(out, "this object; deleting since") || !strings.Contains(out, "(finalizers: foregroundDeletion)") ||
		!strings.Contains(out, "└─ Pod/owners-blocker") || !strings.Contains(out, "blocks its owner's foreground deletion") {
		t.Errorf("tree of the waiting owner:\n%s", out)
	}

	k.run(t, "patch", "pod", "owners-blocker", "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	waitUntil(t, "deletion of the owner once its dependent is gone", func() bool { return gone(t, k, "cm", "owners-owner") })
	if f := findingsJSON(t, ep, "-n", "default"); len(f) != 0 {
		t.Errorf("findings after the foreground deletion ended: %+v", f)
	}
}

// TestOwnersSaysWhatItCouldNotRead reads a store with a Secret encrypted
// at rest and a value that is no object: the note on stderr counts them,
// and Events, which the collector ignores, are not read at all.
func TestOwnersSaysWhatItCouldNotRead(t *testing.T) {
	src := uitest.New()
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan", UID: "cm-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "gone-uid"}}}})
	src.Put("/registry/secrets/default/s", []byte("k8s:enc:aescbc:v1:key1:\x8f\x01\x02ciphertext"))
	src.Put("/registry/configmaps/default/junk", []byte("\xff\xfe not an object"))
	src.Put("/registry/events/default/e", []byte("\xff\xfe an Event would be counted"))
	var out, errOut strings.Builder
	pr := cmdutil.Printer{Out: &out, ErrOut: &errOut}
	if err := runOwners(t.Context(), pr, src, decode.Decoder{}, &ownersFlags{orphans: true}, nil); err != nil {
		t.Fatal(err)
	}
	if want := "2 values hold no object with metadata (1 binary, 1 encrypted) and are not in the graph; --encryption-config decrypts values encrypted at rest\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if !strings.Contains(out.String(), "ConfigMap/orphan   orphan") {
		t.Errorf("the orphan is not listed:\n%s", out.String())
	}
}
