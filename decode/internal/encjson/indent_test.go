package encjson

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"
)

// TestIndentSortedMatchesMarshalIndent covers what the fuzzer does not
// reach: names that need escapes, deep nesting, empty containers.
func TestIndentSortedMatchesMarshalIndent(t *testing.T) {
	for _, src := range []string{
		`{}`, `[]`, `"x"`, `12`, `null`,
		`{"b":1,"a":{"d":[],"c":{}},"a\u003cb":true,"a\"":"\u0026","é":[1,{"z":null,"y":-1.5e-7}]}`,
		`[[[[{"b":{"b":{"b":{"a":1,"b":2}}}}]]]]`,
		`{"z":"\\\"","y":"a\\","x\\":"\n"}`,
	} {
		checkIndentSorted(t, []byte(src))
	}
}

func FuzzIndentSorted(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":{"d":[],"c":{}},"a<b":true,"é":[1,{"z":null,"y":-1.5e-7}]}`))
	pod, err := os.ReadFile("../../../testdata/kube-1.7/json-pod.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pod)
	f.Fuzz(func(t *testing.T, src []byte) {
		if canonical, ok := canonicalJSON(src); ok {
			checkIndentSorted(t, canonical)
		}
	})
}

// checkIndentSorted checks Indent against json.MarshalIndent of src
// decoded into maps, with and without a prefix.
func checkIndentSorted(t *testing.T, src []byte) {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(src))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var x Indenter
	for _, prefix := range []string{"", "        "} {
		want, err := json.MarshalIndent(v, prefix, "    ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Indent([]byte("head"), src, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "head"+string(want) {
			t.Fatalf("%s\nindents as\n%s\nwant\n%s", src, got[4:], want)
		}
	}
}

// canonicalJSON writes src as encoding/json would write it from values in
// the order they come (strings re-escaped, numbers as they are), or says it
// cannot: not one JSON value, or an object with a name twice (maps keep one).
func canonicalJSON(src []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(src))
	d.UseNumber()
	out, ok := canonicalValue(d, nil)
	if _, err := d.Token(); err != io.EOF {
		return nil, false
	}
	return out, ok
}

func canonicalValue(d *json.Decoder, out []byte) ([]byte, bool) {
	tok, err := d.Token()
	if err != nil {
		return nil, false
	}
	switch tok {
	case json.Delim('{'):
		out = append(out, '{')
		seen := map[string]bool{}
		for d.More() {
			if len(seen) > 0 {
				out = append(out, ',')
			}
			tok, err := d.Token()
			name, ok := tok.(string)
			if err != nil || !ok || seen[name] {
				return nil, false
			}
			seen[name] = true
			b, _ := json.Marshal(name)
			if out, ok = canonicalValue(d, append(append(out, b...), ':')); !ok {
				return nil, false
			}
		}
		d.Token()
		return append(out, '}'), true
	case json.Delim('['):
		out = append(out, '[')
		for n := 0; d.More(); n++ {
			if n > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = canonicalValue(d, out); !ok {
				return nil, false
			}
		}
		d.Token()
		return append(out, ']'), true
	}
	if n, ok := tok.(json.Number); ok {
		return append(out, n...), true
	}
	b, err := json.Marshal(tok)
	return append(out, b...), err == nil
}
