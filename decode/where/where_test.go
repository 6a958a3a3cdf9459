package where

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// pod is a Pod as kubectl is served it, JSON-shaped.
func pod(t testing.TB) map[string]any {
	t.Helper()
	const js = `{
	  "apiVersion": "v1", "kind": "Pod",
	  "metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web"},
	    "creationTimestamp": "2026-11-30T10:00:00Z"},
	  "spec": {"nodeName": "node-1", "containers": [
	    {"name": "web", "image": "nginx:1.27", "resources": {"requests": {"cpu": "250m"}}},
	    {"name": "log", "image": "busybox"}]},
	  "status": {"phase": "Pending", "containerStatuses": [{"restartCount": 3}]}
	}`
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMatchAnswersAsKubernetesCELDoes(t *testing.T) {
	cm := map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "big"},
		"data": map[string]any{"a": strings.Repeat("x", 200)}}
	for _, tc := range []struct {
		expr string
		obj  map[string]any
		want bool
	}{
		{`object.status.phase != "Running"`, pod(t), true},
		{`object.status.phase == "Running"`, pod(t), false},
		{`size(object.data) > 100`, cm, false},
		{`size(object.data.a) > 100`, cm, true},
		{`has(object.metadata.labels) && object.metadata.labels.app == "web"`, pod(t), true},
		{`has(object.metadata.labels) && object.metadata.labels.app == "web"`, cm, false},
		{`object.spec.containers.exists(c, c.image.startsWith("nginx"))`, pod(t), true},
		{`object.spec.containers.all(c, c.image.startsWith("nginx"))`, pod(t), false},
		{`object.metadata.creationTimestamp < "2026-12-01"`, pod(t), true},
		{`timestamp(object.metadata.creationTimestamp) > timestamp("2026-11-30T09:00:00Z")`, pod(t), true},
		{`object.status.containerStatuses[0].restartCount >= 3`, pod(t), true},
		// JSON numbers are doubles; CrossTypeNumericComparisons (1.28's
		// environment) compares them with ints.
		{`object.status.containerStatuses[0].restartCount > 2.5`, pod(t), true},
		// Kubernetes' own libraries: quantity, regex, lists.
		{`quantity(object.spec.containers[0].resources.requests.cpu).isLessThan(quantity("1"))`, pod(t), true},
		{`object.metadata.name.matches("^web-[0-9]+$")`, pod(t), true},
		{`object.spec.containers.map(c, c.name).isSorted()`, pod(t), false},
		{`"app" in object.metadata.labels`, pod(t), true},
		{"object.kind == \"Pod\" &&\n  object.spec.nodeName == \"node-1\"", pod(t), true},
	} {
		f, err := Compile(tc.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.expr, err)
			continue
		}
		if got, err := f.Match(tc.obj); err != nil || got != tc.want {
			t.Errorf("%s on %s: %v, %v; want %v", tc.expr, tc.obj["kind"], got, err, tc.want)
		}
		if f.String() != tc.expr {
			t.Errorf("String() = %q, want %q", f.String(), tc.expr)
		}
	}
}

func TestCompileErrorsSayWhere(t *testing.T) {
	for _, tc := range []struct {
		expr         string
		line, column int
		msg, snippet string
	}{
		{`object.status.phase = "Running"`, 1, 21, "token recognition error", ` | object.status.phase = "Running"` + "\n | ....................^"},
		{`objcet.status.phase == "x"`, 1, 1, "undeclared reference to 'objcet'", "\n | ^"},
		{"object.kind == \"Pod\" &&\n  object.spec.(x)", 2, 15, "Syntax error", " |   object.spec.(x)\n | ..............^"},
		{`size(object.data) + 1`, 1, 1, "is of type int, not bool", ""},
		{"\n  \"Running\"", 2, 3, "is of type string, not bool", " |   \"Running\"\n | ..^"},
		{``, 1, 1, "empty", ""},
		{" \n ", 1, 1, "empty", ""},
		{"object.x\x1b[2J == 1", 1, 9, "token recognition error", `\x1b`},
		{strings.Repeat("a", MaxLength+1), 1, MaxLength + 1, "more than the 4096", " | …" + strings.Repeat("a", 76) + "\n"},
	} {
		_, err := Compile(tc.expr)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Compile(%.40q) = %v, want an *Error", tc.expr, err)
			continue
		}
		msg := err.Error()
		if e.Line != tc.line || e.Column != tc.column || !strings.Contains(e.Msg, tc.msg) || !strings.Contains(msg, tc.snippet) {
			t.Errorf("Compile(%.40q): at %d:%d %q\n%s\nwant %d:%d, %q and %q", tc.expr, e.Line, e.Column, e.Msg, msg, tc.line, tc.column, tc.msg, tc.snippet)
		}
		if !strings.HasPrefix(msg, fmt.Sprintf("%d:%d: ", tc.line, tc.column)) || strings.ContainsRune(msg, '\x1b') {
			t.Errorf("Compile(%.40q): the message does not start with line:column, or is not inert:\n%s", tc.expr, msg)
		}
		for _, l := range strings.Split(msg, "\n")[1:] {
			if n := len([]rune(l)); n > 80 {
				t.Errorf("Compile(%.40q): a line of %d characters in the message", tc.expr, n)
			}
		}
	}
}

func TestMatchErrorsAreErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`object.status.podIP == "10.0.0.1"`, "no such key: podIP"},
		{`object.metadata.labels.tier == "front"`, "no such key: tier"},
		{`object.spec.containers > 1`, "no such overload"},
		{`object.status.phase`, "gave string \"Pending\", not a bool"},
		{`object.spec.containers[5].image == "x"`, "index out of bounds"},
	} {
		f, err := Compile(tc.expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.expr, err)
		}
		if ok, err := f.Match(pod(t)); err == nil || ok || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", tc.expr, ok, err, tc.want)
		}
	}
}

// TestHostileExpressionStopsAtTheCostLimit evaluates nested comprehensions
// over a list of 100,000 items (10^10 and 10^15 steps): the cost limit, or
// MaxEvalTime, stops them.
func TestHostileExpressionStopsAtTheCostLimit(t *testing.T) {
	items := make([]any, 100_000)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprint("item-", i)}
	}
	obj := map[string]any{"items": items}
	for _, expr := range []string{
		`object.items.exists(a, object.items.exists(b, object.items.exists(c, a.name + b.name == c.name + "!")))`,
		`object.items.map(a, object.items.map(b, a.name + b.name)).size() == 0`,
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ok, err := f.Match(obj)
		if err == nil || ok || !strings.Contains(err.Error(), "stopped: ") {
			t.Errorf("%s: %v, %v; want the cost or time limit", expr, ok, err)
		}
		// Not a timing goal: a sanity bound far above the ~0.1 s the
		// limit stands for, so that a missing limit fails rather than
		// hanging the test run.
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s ran %v before it stopped", expr, d)
		}
	}
}

// TestCostLimitIsKubeAPIServers searches a 1 MiB value a thousand times:
// cel-go counts a search as a cost in proportion to the bytes searched,
// and the sum passes celconfig.PerCallLimit after a hundred searches,
// long before the clock would stop it.
func TestCostLimitIsKubeAPIServers(t *testing.T) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = fmt.Sprint("needle-", i)
	}
	obj := map[string]any{"items": items, "data": strings.Repeat("hay ", 1<<18)}
	f, err := Compile(`object.items.exists(n, object.data.contains(n))`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Match(obj); err == nil || ok || !strings.Contains(err.Error(), "cost limit per call (1000000)") {
		t.Errorf("%v, %v; want the cost limit", ok, err)
	}
}

func FuzzCompileAndMatchNeverPanic(f *testing.F) {
	for _, s := range []string{
		`object.status.phase != "Running"`, `size(object.data) > 100`,
		`object.spec.containers.exists(c, c.image.startsWith("nginx"))`,
		`has(object.metadata.labels) && object.metadata.labels.app == "web"`,
		`timestamp(object.metadata.creationTimestamp) < timestamp("2026-01-01T00:00:00Z")`,
		`object.x[`, "\xff", `quantity("x") == quantity("1")`, `object.metadata.name.matches("(")`,
		`int(object.status.containerStatuses[0].restartCount) / 0 == 1`,
	} {
		f.Add(s)
	}
	obj := pod(f)
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				_ = e.Error()
			}
			return
		}
		flt.Match(obj)
		flt.Match(map[string]any{})
	})
}
