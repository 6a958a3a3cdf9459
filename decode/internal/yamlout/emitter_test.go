package yamlout

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	goyaml "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// yamlFragments are pieces of strings and keys that exercise each of the
// emitter's choices: the plain scalars YAML 1.1 reads as something else,
// indicators, spaces and breaks at either end, runes go-yaml escapes, text
// long enough to fold, and what encoding/json escapes.
var yamlFragments = []string{
	"", "a", "word", "yes", "No", "on", "OFF", "y", "n", "~", "null", "Null", "true", "FALSE",
	"1e3", "1E3", "0x1F", "0o17", "017", "1_000", "0b101", "0b-1", "-0b11", "+12", "-7", "3.", ".5", ".e1",
	"1e400", "123", "007", "0", "-0", "1.0", "99999999999999999999", "18446744073709551615",
	".inf", "-.Inf", "+.INF", ".nan", "<<", "1:20", "190:20:30.15", "1:2:3", "12:60",
	"2024-01-02", "2024-1-2T3:4:5Z", "2024-01-02 03:04:05", "2024-01-02T03:04:05.123+02:00", "2024-13-45",
	"- a", "-", "-a", ": b", "a: b", "a:b", "a:", "?", "? x", "?x", "#c", "a #b", "a#b", "[a]", "{b}", ",",
	"&x", "*y", "!t", "|", ">", "%", "@", "`", "'q'", "\"dq\"", "\\", "---", "...", "--- x",
	" ", " a", "a ", "  ", "x  y", "\t", "\ta", "a\n", "\n", "a\nb", "a\n\n", "\n\na", " \na", "a \nb", "a\n b",
	"\r", "a\r\nb", "\u0085", "\u2028", "\u2029", "x\u2028y", "\u00a0", "\ufeff", "x\ufeffy", "\ufffe", "\uffff",
	"\u0080", "\u009b", "\x7f", "\x1b[2J", "\x1b]0;t\x07", "\x00", "\x01", "\x0b", "\x0c", "\x1f",
	"\xff", "\xe6\x97", "日本語", "é", "😀", "\U0010ffff", "<>&", "\u202e",
	strings.Repeat("word ", 20), strings.Repeat("x", 90) + " y", strings.Repeat("ab ", 30) + " cd",
	strings.Repeat("k", 130),
}

// valueGen builds a JSON-shaped value (what a decoded object's view holds:
// maps, slices, strings, int64, float64, bool, nil) from fuzz bytes.
type valueGen struct{ b []byte }

func (g *valueGen) next() int {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return int(c)
}

func (g *valueGen) text() string {
	var s strings.Builder
	for range g.next() % 4 {
		if c := g.next(); c%5 == 0 {
			s.WriteRune(rune(g.next()<<8 | g.next())) // any rune of the BMP
		} else {
			s.WriteString(yamlFragments[g.next()%len(yamlFragments)])
		}
	}
	return s.String()
}

var yamlNumbers = []any{
	int64(0), int64(-1), int64(1<<53 + 1), int64(math.MaxInt64), int64(math.MinInt64),
	0.5, 1e21, 1e20, 1e19, 1.5e-7, 1e-6, math.Copysign(0, -1), 3.0, 1e300, 123456789.5, -2.5e-300,
}

func (g *valueGen) value(depth int) any {
	kinds := 8
	if depth >= 4 {
		kinds = 6
	}
	switch g.next() % kinds {
	case 0, 1:
		return g.text()
	case 2:
		return yamlNumbers[g.next()%len(yamlNumbers)]
	case 3:
		return int64(g.next()<<16|g.next()<<8|g.next()) - 1<<23
	case 4:
		return g.next()%2 == 0
	case 5:
		return nil
	case 6:
		m := map[string]any{}
		for range g.next() % 6 {
			m[g.text()] = g.value(depth + 1)
		}
		return m
	}
	l := []any{}
	for range g.next() % 5 {
		l = append(l, g.value(depth+1))
	}
	return l
}

// checkYAMLLikeSigs checks the emitter on v against sigs.k8s.io/yaml,
// byte for byte, wherever go-yaml reads back the JSON it is given. Where it
// cannot (it refuses DEL, the C1 controls but NEL, U+FFFE and U+FFFF in the
// JSON text, and folds a raw NEL as a line break, changing the string), the
// emitter must write what go-yaml's encoder writes for the value
// JSONToYAML would have read: those runes escaped.
func checkYAMLLikeSigs(t *testing.T, v any) {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Document(nil, js)
	if err != nil {
		t.Fatalf("%q: %v", js, err)
	}
	if !TotallyOrdered(v) {
		return
	}
	want, sigsErr := yaml.Marshal(v)
	if sigsErr != nil || strings.Contains(string(js), "\u0085") {
		want, err = goyaml.Marshal(readAsJSONToYAMLReads(t, js))
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != string(want) {
		t.Fatalf("JSON %s\nemitter:\n%s\nwant (sigs.k8s.io/yaml: %v):\n%s", js, got, sigsErr, want)
	}
}

// readAsJSONToYAMLReads decodes js as go-yaml reads JSON in JSONToYAML:
// integers as integers up to uint64, other numbers as float64.
func readAsJSONToYAMLReads(t *testing.T, js []byte) any {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var resolve func(any) any
	resolve = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return i
			}
			if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
				return u
			}
			f, _ := strconv.ParseFloat(string(x), 64)
			return f
		case map[string]any:
			for k, e := range x {
				x[k] = resolve(e)
			}
		case []any:
			for i, e := range x {
				x[i] = resolve(e)
			}
		}
		return v
	}
	return resolve(v)
}

// FuzzYAMLEmitter builds arbitrary values from the fuzz input and checks the
// emitter against sigs.k8s.io/yaml on each.
func FuzzYAMLEmitter(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	for range 64 {
		seed := make([]byte, 200)
		rng.Read(seed)
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &valueGen{b: data}
		checkYAMLLikeSigs(t, map[string]any{"root": g.value(0), g.text(): g.value(1)})
	})
}

// TestYAMLEmitterOnEveryFragment writes each fragment as a key and as a
// value, at the root, nested, and in a list, each beside long text that
// makes lines fold.
func TestYAMLEmitterOnEveryFragment(t *testing.T) {
	long := strings.Repeat("word ", 20)
	for _, s := range yamlFragments {
		for _, r := range []string{"", "a" + s, s + "a", s + " " + long, long + s + long} {
			s := s + r
			checkYAMLLikeSigs(t, map[string]any{
				s:      s,
				"list": []any{s, []any{s}, map[string]any{s: []any{s, map[string]any{}}, "k": []any{}}},
				"deep": map[string]any{"deeper": map[string]any{s: map[string]any{"x": s}}},
			})
		}
	}
	for i := range 0x2100 { // every rune of the first blocks, C0 and C1 included
		s := string(rune(i))
		checkYAMLLikeSigs(t, map[string]any{s: s, "l": []any{"a" + s + "b", s + " " + long}})
	}
}

// FuzzJSONToYAML checks JSONToYAML against sigs.k8s.io/yaml.JSONToYAML on
// arbitrary input: never a panic, an error wherever the input is no JSON,
// and the same bytes wherever go-yaml reads the JSON back (see
// checkYAMLLikeSigs).
func FuzzJSONToYAML(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, 2.50, {"b": null}], "c": "d: e", "e": {}}`, `[]`, `"x"`, `1e400`, `-0.0`, `{"a":1,"a":2}`,
		`{"k": "\ud83d\ude00"}`, `{"<<": {"x": 1}}`, "{\"a\":\"\xff\"}", `{"a" 1}`, `{"a":`, ` {"a" : [ ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := JSONToYAML(nil, data)
		var v any
		if !json.Valid(data) || !utf8.Valid(data) {
			if err == nil {
				t.Fatalf("%q is no JSON, yet it converts to\n%s", data, got)
			}
			return
		}
		if json.Unmarshal(data, &v) != nil || !TotallyOrdered(v) || strings.Contains(string(data), "\u0085") {
			return
		}
		want, sigsErr := yaml.JSONToYAML(data)
		if sigsErr != nil {
			return // go-yaml cannot read it back: checkYAMLLikeSigs covers what the emitter writes then
		}
		if err != nil || string(got) != string(want) {
			t.Fatalf("JSON %s\nemitter (%v):\n%s\nsigs.k8s.io/yaml:\n%s", data, err, got, want)
		}
	})
}
