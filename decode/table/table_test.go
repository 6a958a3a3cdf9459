package table

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// stored is obj as decode reads it back from etcd at revision rev: the
// protobuf kube-apiserver writes, decoded.
func stored(t *testing.T, obj runtime.Object, rev int64) runtime.Object {
	t.Helper()
	value, err := etcdviewtest.Encode(obj)
	if err != nil {
		t.Fatal(err)
	}
	key, err := etcdviewtest.Key(obj)
	if err != nil {
		t.Fatal(err)
	}
	o := decode.Decoder{JSONOnly: true}.DecodeAt(key, value, rev)
	if o.Object == nil {
		t.Fatalf("%s: %s", key, o.Label())
	}
	return o.Object
}

func builtin(t *testing.T, name string) *Resource {
	t.Helper()
	res, ok := decode.LookupResource(name)
	if !ok {
		t.Fatalf("no resource %s", name)
	}
	r, err := Builtin(res)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rowOf is obj's table: its headers, and its one row as header → cell.
func rowOf(t *testing.T, r *Resource, obj runtime.Object, rev int64, withNamespace bool) (headers []string, cells map[string]string) {
	t.Helper()
	o, err := r.Object(obj, rev)
	if err != nil {
		t.Fatal(err)
	}
	tbl, order, err := r.Table([]Object{o}, withNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Rows) != 1 || order[0] != 0 {
		t.Fatalf("%d rows in order %v for one object", len(tbl.Rows), order)
	}
	cells = map[string]string{}
	for i, c := range tbl.ColumnDefinitions {
		h := strings.ToUpper(c.Name)
		headers = append(headers, h)
		if c := tbl.Rows[0].Cells[i]; c != nil {
			cells[h] = fmt.Sprint(c)
		}
	}
	return headers, cells
}

var created = metav1.NewTime(time.Now().Add(-90 * time.Minute))

func runningPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", CreationTimestamp: created, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "nginx"}}},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "a", Ready: true, RestartCount: 2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "b", Ready: false, RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			},
		},
	}
}

func TestPodRowHasKubectlsColumnsAndRevision(t *testing.T) {
	headers, cells := rowOf(t, builtin(t, "po"), stored(t, runningPod(), 4711), 4711, true)
	want := []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES", "REVISION"}
	if !slices.Equal(headers, want) {
		t.Errorf("headers %q, want %q", headers, want)
	}
	for h, v := range map[string]string{"NAMESPACE": "shop", "NAME": "web-0", "READY": "1/2", "STATUS": "Running", "RESTARTS": "3", "AGE": "90m", "IP": "10.0.0.7", "NODE": "node-1", "REVISION": "4711"} {
		if cells[h] != v {
			t.Errorf("%s = %q, want %q", h, cells[h], v)
		}
	}
}

// TestRowsComeFromTheConvertorTheRegistrySets checks the resources whose
// registry does not use pkg/printers: the default convertor (roles, and
// CSIStorageCapacity although printers has a handler), and the
// Deployment's printer for a resource that does.
func TestRowsComeFromTheConvertorTheRegistrySets(t *testing.T) {
	for _, tc := range []struct {
		resource string
		obj      runtime.Object
		headers  []string
	}{
		{"roles", &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", CreationTimestamp: created}},
			[]string{"NAME", "CREATED AT", "REVISION"}},
		{"csistoragecapacities", &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", CreationTimestamp: created}, StorageClassName: "standard"},
			[]string{"NAME", "CREATED AT", "REVISION"}},
		{"deploy", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", CreationTimestamp: created}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)}},
			[]string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR", "REVISION"}},
	} {
		headers, cells := rowOf(t, builtin(t, tc.resource), stored(t, tc.obj, 9), 9, false)
		if !slices.Equal(headers, tc.headers) {
			t.Errorf("%s: headers %q, want %q", tc.resource, headers, tc.headers)
		}
		if at := cells["CREATED AT"]; at != "" && at != created.UTC().Format(time.RFC3339) {
			t.Errorf("%s: CREATED AT %q", tc.resource, at)
		}
	}
}

// TestSelectorsAreTheRegistrys: each field label comes from the
// registry's field set, converted from the served version, and a label
// the API does not support is refused with its words.
func TestSelectorsAreTheRegistrys(t *testing.T) {
	pods := builtin(t, "pods")
	pod := stored(t, runningPod(), 3)
	for _, tc := range []struct {
		labels, fields string
		want           bool
	}{
		{"app=web", "", true},
		{"app!=web", "", false},
		{"", "status.phase=Running,spec.nodeName=node-1", true},
		{"", "status.podIP=10.0.0.7", true},
		{"", "metadata.namespace=shop,metadata.name=web-0", true},
		{"app in (db)", "status.phase=Running", false},
		// Not in the fixture: defaulted on read, as kube-apiserver's
		// storage codec defaults what it decodes.
		{"", "spec.restartPolicy=Always", true},
	} {
		sel, err := pods.Selector(tc.labels, tc.fields)
		if err != nil {
			t.Fatalf("-l %q --field-selector %q: %v", tc.labels, tc.fields, err)
		}
		o, err := pods.Object(pod.DeepCopyObject(), 3)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := sel.Matches(o); err != nil || got != tc.want {
			t.Errorf("-l %q --field-selector %q: %v %v, want %v", tc.labels, tc.fields, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ resource, fields, want string }{
		{"pods", "spec.bogus=1", "field label not supported: spec.bogus"},
		{"configmaps", "data.x=1", `"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"pods", "status.phase", "invalid selector"},
	} {
		if _, err := builtin(t, tc.resource).Selector("", tc.fields); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s --field-selector %s: %v, want %q", tc.resource, tc.fields, err, tc.want)
		}
	}
}

// TestServedIsWhatKubectlGets: events stored by the core API are served
// as events.k8s.io/v1 to who asks for that group, with its field names.
func TestServedIsWhatKubectlGets(t *testing.T) {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web-0.1", Namespace: "shop", CreationTimestamp: created},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-0", Namespace: "shop"},
		Reason:         "Started", Message: "started container", Type: corev1.EventTypeNormal,
	}
	r := builtin(t, "events.events.k8s.io")
	o, err := r.Object(stored(t, ev, 8), 8)
	if err != nil {
		t.Fatal(err)
	}
	served, err := o.Served()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := served.(*eventsv1.Event)
	if !ok || got.Note != "started container" || got.Regarding.Name != "web-0" || got.ResourceVersion != "8" {
		t.Errorf("served %T %+v, want an events.k8s.io/v1 Event with its note and regarding", served, served)
	}
	sel, err := r.Selector("", "regarding.name=web-0,reason=Started")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := sel.Matches(o); !ok || err != nil {
		t.Errorf("events.k8s.io field selector: %v %v", ok, err)
	}
}

// TestFlowSchemasComeInPrecedenceOrder: FlowSchemas' printer sorts a page,
// and says so; a Pod's does not.
func TestFlowSchemasComeInPrecedenceOrder(t *testing.T) {
	r := builtin(t, "flowschemas")
	var objs []Object
	for i, prec := range []int32{900, 100, 500} {
		fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fs-%d", i), CreationTimestamp: created},
			Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: prec, PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "p"}}}
		o, err := r.Object(stored(t, fs, int64(10+i)), int64(10+i))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	tbl, order, err := r.Table(objs, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []any
	for _, row := range tbl.Rows {
		names = append(names, row.Cells[0])
	}
	if fmt.Sprint(names) != "[fs-1 fs-2 fs-0]" || fmt.Sprint(order) != "[1 2 0]" || !r.SortsPages() || builtin(t, "pods").SortsPages() {
		t.Errorf("rows %v in order %v, SortsPages %v", names, order, r.SortsPages())
	}
	if last := tbl.Rows[0].Cells[len(tbl.Rows[0].Cells)-1]; last != int64(11) {
		t.Errorf("the first row's REVISION is %v, want 11: the revision follows its object", last)
	}
}

// widgetSchema is the schema of both versions of customDefinition's: the
// fields its printer columns show.
const widgetSchema = `{"type":"object","properties":{"spec":{"type":"object","properties":{
 "size":{"type":"integer"},"weight":{"type":"number"},"shiny":{"type":"boolean"},"note":{"type":"string"}}}}}`

// customDefinition is a CRD as decoded from etcd (JSON) with two served
// versions, v1 printing columns of each type.
func customDefinition(t *testing.T, conversion string) runtime.Object {
	t.Helper()
	o := decode.Decoder{JSONOnly: true}.DecodeAt("/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com", []byte(`{
"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wdg"]},
"conversion":`+conversion+`,
"versions":[
 {"name":"v1beta1","served":true,"storage":true,"schema":{"openAPIV3Schema":`+widgetSchema+`}},
 {"name":"v1","served":true,"storage":false,"schema":{"openAPIV3Schema":`+widgetSchema+`},"additionalPrinterColumns":[
  {"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Weight","type":"number","jsonPath":".spec.weight"},
  {"name":"Shiny","type":"boolean","jsonPath":".spec.shiny"},{"name":"Note","type":"string","jsonPath":".spec.note","priority":1}]}]}}`), 2)
	if o.Object == nil {
		t.Fatal(o.Label())
	}
	return o.Object
}

func TestCustomResourcesPrintTheirPreferredVersionsColumns(t *testing.T) {
	r, err := Custom(customDefinition(t, `{"strategy":"None"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Served.Version != "v1" || r.Namespaced || r.KeyPrefix("", "") != "/registry/example.com/widgets/" ||
		fmt.Sprint(r.Names()) != "[widgets widget widgets.example.com widget.example.com wdg]" {
		t.Errorf("served %v, namespaced %v, prefix %s, names %v", r.Served, r.Namespaced, r.KeyPrefix("", ""), r.Names())
	}
	widget := func() runtime.Object {
		return decode.Decoder{JSONOnly: true}.DecodeAt("/registry/example.com/widgets/gear",
			[]byte(`{"apiVersion":"example.com/v1beta1","kind":"Widget","metadata":{"name":"gear"},"spec":{"size":12,"weight":2.5,"shiny":true,"note":"spare"}}`), 5).Object
	}
	headers, cells := rowOf(t, r, widget(), 5, false)
	if want := []string{"NAME", "SIZE", "WEIGHT", "SHINY", "NOTE", "REVISION"}; !slices.Equal(headers, want) {
		t.Errorf("headers %q, want %q", headers, want)
	}
	if fmt.Sprint(cells) != "map[NAME:gear NOTE:spare REVISION:5 SHINY:true SIZE:12 WEIGHT:2.5]" {
		t.Errorf("cells %v", cells)
	}
	o, _ := r.Object(widget(), 5)
	if served, err := o.Served(); err != nil || served.GetObjectKind().GroupVersionKind().Version != "v1" {
		t.Errorf("served as %v (%v), want v1: strategy None changes apiVersion alone", served.GetObjectKind().GroupVersionKind(), err)
	}
	r, err = Custom(customDefinition(t, `{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://conv.example.com"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	o, _ = r.Object(widget(), 5)
	if served, _ := o.Served(); served.GetObjectKind().GroupVersionKind().Version != "v1beta1" {
		t.Errorf("a webhook's conversion cannot run here: served as %v, want as stored", served.GetObjectKind().GroupVersionKind())
	}
	want := "Warning: 1 widgets.example.com shown as stored, in example.com/v1beta1 (or another stored version), not as served in example.com/v1: " +
		"the CustomResourceDefinition converts versions with a webhook, which etcdscope does not call"
	if got := r.Unconverted(); got != want {
		t.Errorf("Unconverted() = %q, want %q", got, want)
	}
}

// TestRevisionFollowsTheDefinedColumns: the IPAddress printer makes an AGE
// cell it defines no column for; kubectl does not print it, and REVISION
// is not shifted onto it.
func TestRevisionFollowsTheDefinedColumns(t *testing.T) {
	ip := &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.10", CreationTimestamp: created},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}}}
	headers, cells := rowOf(t, builtin(t, "ipaddresses"), stored(t, ip, 21), 21, false)
	if want := []string{"NAME", "PARENTREF", "REVISION"}; !slices.Equal(headers, want) || cells["REVISION"] != "21" || cells["PARENTREF"] != "services/kube-system/kube-dns" {
		t.Errorf("headers %q, cells %v", headers, cells)
	}
}
