package decode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode/internal/yamlout"
	"sigs.k8s.io/yaml"
)

var knownFormats = map[Format]bool{
	FormatProtobuf: true, FormatUnknownProtobuf: true, FormatJSON: true, FormatCBOR: true,
	FormatEncrypted: true, FormatText: true, FormatBinary: true,
}

// FuzzDecode feeds Decode arbitrary keys and values, seeded with real values
// and their truncations: it must never panic and always label the result,
// print the same JSON alone and as an item of a List, and each section of
// an object as sigs.k8s.io/yaml prints that field of its view.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"storage-pod.bin", "storage-job.bin"} {
		v := readKube17(f, name)
		for _, n := range []int{len(v), len(v) - 1, len(v) - 2, len(v) / 2, 100, 30, 21, 6, 5} {
			f.Add("/registry/pods/default/pi-dqtsw", v[:n])
		}
	}
	f.Add("/registry/secrets/default/db", []byte("k8s:enc:aescbc:v1:key1:0123456789abcdef0123456789abcdef"))
	f.Add("/registry/secrets/default/db", []byte("k8s:enc:kms:v2:vault:\x12\x02id"))
	f.Add("/registry/x.example.com/things/t", []byte(`{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t"}}`))
	f.Add("/registry/x.example.com/things/t", []byte("\xd9\xd9\xf7\xa1\x64kind\x65Thing"))
	f.Add("/registry/x.example.com/things/t", []byte("\xd9\xd9\xf7\xa1\x42\xff0\x30")) // a byte-string name, not UTF-8
	f.Add("compact_rev_key", []byte("\x00\x00\x00\x00\x00\x00\x10\x00"))
	f.Fuzz(func(t *testing.T, key string, value []byte) {
		o := Decode(key, value)
		if !knownFormats[o.Format] {
			t.Fatalf("unlabelled result %q for %q", o.Format, value)
		}
		if o.Size != len(value) {
			t.Fatalf("Size = %d, want %d", o.Size, len(value))
		}
		if o.Format != FormatProtobuf && o.Format != FormatJSON && o.Format != FormatCBOR && o.Object != nil {
			t.Fatalf("%s result carries an object", o.Format)
		}
		if strings.Contains(o.Problem, "decoder failed") {
			t.Fatalf("a decoder panicked: %s", o.Problem)
		}
		_ = o.Text()
		_ = Diff(o, Decode(key, nil))
		if o.Object != nil && o.rendered {
			checkSectionsWhereSigsReadsBack(t, o)
		}
		js, jsErr := o.JSON(false)
		listed, listErr := Decoder{JSONOnly: true}.Decode(key, value).AppendJSON(nil, "")
		if string(listed)+"\n" != string(js) && (jsErr == nil || listErr == nil) {
			t.Fatalf("a List item is not the object's JSON:\n%s\n%s", listed, js)
		}
	})
}

// checkSectionsWhereSigsReadsBack checks o's sections against
// sigs.k8s.io/yaml wherever it can be the reference (see
// yamlout's checkYAMLLikeSigs).
func checkSectionsWhereSigsReadsBack(t *testing.T, o Object) {
	view, err := o.newView()
	if err != nil {
		return
	}
	folded := o.options.hide(o.GVK, view)
	js, err := json.Marshal(view)
	if err != nil || strings.Contains(string(js), "\u0085") || !yamlout.TotallyOrdered(view) {
		return
	}
	if _, err := yaml.Marshal(view); err != nil {
		return
	}
	if _, distinct := namedAsJSON(view); !distinct {
		return // two names not UTF-8 that JSON writes as one: no reference says which is shown
	}
	checkSectionsAgainstSigs(t, o, view, folded)
}
