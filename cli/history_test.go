package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHistoryShowsEachRevisionAndWhatChanged(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.26"}}},
	}
	etcdviewtest.Put(t, cli, pod)
	pod.Spec.Containers[0].Image = "nginx:1.27"
	updated := etcdviewtest.Put(t, cli, pod)
	if _, err := cli.Delete(context.Background(), "/registry/pods/default/web-0"); err != nil {
		t.Fatal(err)
	}
	etcdviewtest.Put(t, cli, pod)
	key := "/registry/pods/default/web-0"

	table := run(t, "--endpoints", endpoints, "history", key, "--all-incarnations")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	wantChanges := []string{"ADDED", "DELETED", "MODIFIED", "ADDED"}
	if len(lines) != 1+len(wantChanges) {
		t.Fatalf("history table:\n%s\nwant a header and %d revisions", table, len(wantChanges))
	}
	for i, want := range wantChanges {
		if f := strings.Fields(lines[i+1]); len(f) < 2 || f[1] != want {
			t.Errorf("line %q, want change %s", lines[i+1], want)
		}
	}
	if !strings.Contains(lines[3], "nginx:1.26") || !strings.Contains(lines[3], "nginx:1.27") {
		t.Errorf("the update's line %q does not say the image changed", lines[3])
	}

	// Without the flag: the current incarnation, and a line that says an
	// earlier one exists.
	current := strings.Split(strings.TrimSpace(run(t, "--endpoints", endpoints, "history", key)), "\n")
	note := fmt.Sprintf("an earlier incarnation existed at revision %d; the incarnations before this one were not read (read with --all-incarnations)", updated)
	if len(current) != 3 || strings.Fields(current[1])[1] != "ADDED" || current[2] != note {
		t.Errorf("history of the current incarnation:\n%s\nwant its creation, then %q", strings.Join(current, "\n"), note)
	}

	diff := run(t, "--endpoints", endpoints, "history", key, "--diff", "--all-incarnations")
	if !strings.Contains(diff, "-  - image: nginx:1.26") && !strings.Contains(diff, "-    image: nginx:1.26") {
		t.Errorf("--diff lacks the removed image line:\n%s", diff)
	}

	for _, tc := range []struct {
		all     bool
		entries int
		earlier string
	}{{true, 4, "read"}, {false, 1, "unread"}} {
		var doc struct {
			Earlier string `json:"earlierIncarnations"`
			Entries []struct {
				Revision int64           `json:"revision"`
				Change   string          `json:"change"`
				Object   json.RawMessage `json:"object"`
			} `json:"entries"`
		}
		out := run(t, "--endpoints", endpoints, "history", key, "-o", "json", fmt.Sprintf("--all-incarnations=%v", tc.all))
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Entries) != tc.entries || doc.Earlier != tc.earlier {
			t.Fatalf("history -o json --all-incarnations=%v: %v, %d entries, earlier incarnations %q; want %d, %q\n%s", tc.all, err, len(doc.Entries), doc.Earlier, tc.entries, tc.earlier, out)
		}
		if !strings.Contains(string(doc.Entries[0].Object), `"kind": "Pod"`) {
			t.Errorf("newest entry's object %s is not the pod", doc.Entries[0].Object)
		}
	}
}

// TestHistoryOfADeletedObjectEndsInItsDeletion: a deleted object's history
// is its last incarnation, ending in the deletion, read without a replay,
// and named as get names it.
func TestHistoryOfADeletedObjectEndsInItsDeletion(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	key := "/registry/statefulsets/lab/notebook"
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "notebook", Namespace: "lab", Labels: map[string]string{"v": "1"}}}
	created := etcdviewtest.Put(t, cli, sts)
	// Other writes in its life and after its deletion: History finds a
	// deleted key by probes back from the head, which meet an incarnation
	// that lived longer than the time since.
	others := func(prefix string) {
		for i := range 40 {
			etcdviewtest.Put(t, cli, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(prefix, i), Namespace: "lab"}})
		}
	}
	others("during-")
	sts.Labels["v"] = "2"
	updated := etcdviewtest.Put(t, cli, sts)
	resp, err := cli.Delete(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	deleted := resp.Header.Revision
	others("after-")
	want := [][]string{{fmt.Sprint(deleted), "DELETED"}, {fmt.Sprint(updated), "MODIFIED", "2"}, {fmt.Sprint(created), "ADDED", "1"}}
	for _, args := range [][]string{{key}, {"statefulset", "notebook", "-n", "lab"}, {"sts/notebook", "-n", "lab"}} {
		table := run(t, append([]string{"--endpoints", endpoints, "history"}, args...)...)
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if len(lines) != 1+len(want) {
			t.Errorf("history %s:\n%s\nwant a header and %d revisions", strings.Join(args, " "), table, len(want))
			continue
		}
		for i, w := range want {
			if f := strings.Fields(lines[i+1]); len(f) < len(w) || !slices.Equal(f[:len(w)], w) {
				t.Errorf("history %s: line %q, want it to start %v", strings.Join(args, " "), lines[i+1], w)
			}
		}
	}
	table := run(t, "--endpoints", endpoints, "history", key, "--all-incarnations")
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 4 || !strings.Contains(lines[1], "DELETED") || !strings.Contains(lines[3], "ADDED") {
		t.Errorf("history --all-incarnations of a deleted key:\n%s", table)
	}
}

func TestHistoryRefusesBadNames(t *testing.T) {
	db := kube17 + "boltdb-db"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown resource", []string{"widgets", "w"}, `the server doesn't have a resource type "widgets"`},
		{"unknown resource, typed", []string{"widgets/w"}, `the server doesn't have a resource type "widgets"`},
		{"resource without a name", []string{"pods"}, "pods: give the NAME of the object too"},
		{"type and name twice", []string{"po/pi-dqtsw", "pi-dqtsw"}, "there is no need to specify a resource type as a separate argument"},
		{"key with a name", []string{"/registry/pods/default/pi-dqtsw", "x"}, "a key takes no NAME"},
		{"key with a namespace", []string{"/registry/pods/default/pi-dqtsw", "-n", "x"}, "-n goes with a RESOURCE NAME"},
		{"unknown name", []string{"po", "nope"}, "no revision of /registry/pods/default/nope found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := runFails(t, append([]string{"history", "--db", db}, tc.args...)...)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want it to say %q", msg, tc.want)
			}
		})
	}
	if out := run(t, "history", "--db", db, "job", "pi"); !strings.HasSuffix(out, "82703      MODIFIED   3         638 B   \nhistory before revision 241828 was compacted\n") {
		t.Errorf("history job pi:\n%s\nwant the job's one revision since the compaction", out)
	}
}

func TestReplayLineRedrawsOneLine(t *testing.T) {
	var b bytes.Buffer
	l := &replayLine{w: &b, start: time.Now()}
	l.show(etcdview.ReplayProgress{From: 1, Head: 200, Reached: 0})
	l.show(etcdview.ReplayProgress{From: 1, Head: 200, Reached: 100, Found: 3})
	l.clear()
	got := regexp.MustCompile(`[0-9.]+s`).ReplaceAllString(b.String(), "Ts")
	want := "\r\x1b[Kreplaying etcd's history, revisions 1 to 200: 0%, 0 revisions of the key, Ts" +
		"\r\x1b[Kreplaying etcd's history, revisions 1 to 200: 50%, 3 revisions of the key, Ts" + "\r\x1b[K"
	if got != want {
		t.Errorf("progress line %q, want %q", got, want)
	}
	var none *replayLine
	none.clear() // no line: nothing drawn, nothing to clear
}

// testHistory is a key's revisions as History returns them, newest first:
// writes of a Pod, a deletion, a value that is no object, with strings a
// terminal would obey.
func testHistory(t *testing.T, compacted int64) etcdview.History {
	t.Helper()
	key := "/registry/pods/default/web-0"
	var entries []etcdview.Entry
	for rev := int64(2); rev < 12; rev++ {
		pod := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Annotations: map[string]string{"note": fmt.Sprintf("\x1b]0;rev %d\x07 <b>", rev)}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: fmt.Sprintf("nginx:1.%d", rev)}}},
		}
		value, err := etcdviewtest.Encode(pod)
		if err != nil {
			t.Fatal(err)
		}
		kv := etcdview.KV{Key: key, Value: value, CreateRevision: 2, ModRevision: rev, Version: rev - 1}
		e := etcdview.Entry{KV: kv}
		switch rev {
		case 5:
			e = etcdview.Entry{KV: etcdview.KV{Key: key, ModRevision: rev}, Deleted: true}
		case 6:
			e.KV.Value = []byte("plain text \x1b[2J")
		}
		entries = append([]etcdview.Entry{e}, entries...)
	}
	return etcdview.History{Key: key, Revision: 20, Entries: entries, CompactedAt: compacted, Earlier: etcdview.EarlierRead}
}

// historyDoc is the document -o json and -o yaml print, whole.
func historyDoc(h etcdview.History) map[string]any {
	entries := make([]historyEntry, 0, len(h.Entries))
	for _, e := range h.Entries {
		entries = append(entries, historyEntryOf(e, decode.Decoder{}))
	}
	doc := map[string]any{"key": h.Key, "revision": h.Revision, "entries": entries, "earlierIncarnations": h.Earlier.String()}
	if h.CompactedAt != 0 {
		doc["compactedAt"] = h.CompactedAt
	}
	if h.EarlierSeenAt != 0 {
		doc["earlierSeenAt"] = h.EarlierSeenAt
	}
	return doc
}

// unread is h as a live etcd's history of its current incarnation: an
// earlier one was seen at revision 4, and not read.
func unread(h etcdview.History) etcdview.History {
	h.Entries, h.Earlier, h.EarlierSeenAt = h.Entries[:6], etcdview.EarlierUnread, 4
	return h
}

func TestHistoryDocumentStreamsWhatWriteDocPrints(t *testing.T) {
	for _, h := range []etcdview.History{testHistory(t, 0), testHistory(t, 3), unread(testHistory(t, 0))} {
		compacted := h.CompactedAt
		for _, output := range []string{decode.OutputJSON, decode.OutputYAML} {
			var want, got bytes.Buffer
			if err := cmdutil.WriteDoc(&want, output, historyDoc(h)); err != nil {
				t.Fatal(err)
			}
			if err := printHistoryAs(cmdutil.Printer{Out: &got, Output: output}, h, decode.Decoder{}, false); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("-o %s, compacted at %d:\n%s\nwant\n%s", output, compacted, got.String(), want.String())
			}
		}
	}
}

// TestHistoryTableIsLaidOutAsTabwriterWould checks the table, written a
// row at a time, against tabwriter over the whole of it.
func TestHistoryTableIsLaidOutAsTabwriterWould(t *testing.T) {
	h := unread(testHistory(t, 3))
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tCHANGE\tVERSION\tSIZE\tWHAT CHANGED")
	for i, e := range h.Entries {
		rev, version, size := historyCells(e)
		what := ""
		if !e.Deleted && i+1 < len(h.Entries) && !h.Entries[i+1].Deleted {
			what = decode.Diff(h.Entries[i+1].Object(decode.Decoder{}), e.Object(decode.Decoder{})).Summary()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", rev, e.Type(), version, size, what)
	}
	tw.Flush()
	want.WriteString(h.Truncated() + "\n")
	want.WriteString("an earlier incarnation existed at revision 4; the incarnations before this one were not read (read with --all-incarnations)\n")
	var got bytes.Buffer
	if err := printHistoryAs(cmdutil.Printer{Out: &got}, h, decode.Decoder{}, false); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("table:\n%s\nwant\n%s", got.String(), want.String())
	}
}

// TestHistoryOnATerminalIsInert prints every form of the history to a
// terminal: no control byte from etcd reaches it, while a pipe gets the
// bytes as they are.
func TestHistoryOnATerminalIsInert(t *testing.T) {
	h := testHistory(t, 0)
	for _, tc := range []struct {
		output string
		diff   bool
	}{{"", false}, {"", true}, {decode.OutputJSON, false}, {decode.OutputYAML, false}} {
		var tty, pipe bytes.Buffer
		if err := printHistoryAs(cmdutil.Printer{Out: &tty, P: cmdutil.Palette{TTY: true, Color: true}, Output: tc.output}, h, decode.Decoder{}, tc.diff); err != nil {
			t.Fatal(err)
		}
		if err := printHistoryAs(cmdutil.Printer{Out: &pipe, Output: tc.output}, h, decode.Decoder{}, tc.diff); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(withoutColours(tty.String()), "\x1b\x07") {
			t.Errorf("-o %q --diff=%v: a control byte reaches the terminal:\n%q", tc.output, tc.diff, tty.String())
		}
		if tc.output == "" && !strings.Contains(tty.String(), "\x1b[32mADDED\x1b[0m") {
			t.Errorf("--diff=%v: no colour on a terminal:\n%q", tc.diff, tty.String())
		}
		// --diff prints the text value as it is: escaped on a terminal,
		// exact to a pipe.
		if tc.diff && (!strings.Contains(tty.String(), `plain text \x1b[2J`) || !strings.Contains(pipe.String(), "plain text \x1b[2J")) {
			t.Errorf("--diff: the text value is not escaped on a terminal and exact to a pipe:\n%s\n%s", tty.String(), pipe.String())
		}
	}
}

// withoutColours is s without the palette's SGR sequences.
func withoutColours(s string) string {
	return regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(s, "")
}

// TestHistoryVersionUnknownIsADash: a value's version is 1 or more on
// etcd; a 0 is kine's, which keeps none, and the table says unknown
// rather than a version no write had.
func TestHistoryVersionUnknownIsADash(t *testing.T) {
	for _, tc := range []struct {
		entry   etcdview.Entry
		version string
	}{
		{etcdview.Entry{KV: etcdview.KV{ModRevision: 7, Version: 3, Value: []byte("v")}}, "3"},
		{etcdview.Entry{KV: etcdview.KV{ModRevision: 7, Value: []byte("v")}}, "-"},
		{etcdview.Entry{KV: etcdview.KV{ModRevision: 7}, Deleted: true}, ""},
	} {
		if _, version, _ := historyCells(tc.entry); version != tc.version {
			t.Errorf("%+v: VERSION %q, want %q", tc.entry, version, tc.version)
		}
	}
}
