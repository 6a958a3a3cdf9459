package decode

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInertShowsEveryControlVisibly(t *testing.T) {
	for c := 0; c < 0x20; c++ {
		s := "a" + string(rune(c)) + "b"
		got := Inert(s)
		if activeAt(got, false) >= 0 || !strings.HasPrefix(got, "a\\") || !strings.HasSuffix(got, "b") {
			t.Errorf("Inert(%q) = %q: want the control as a visible escape", s, got)
		}
	}
	cases := []struct{ in, want string }{
		{"plain text, ünïcödé, 日本語, emoji 🙂", "plain text, ünïcödé, 日本語, emoji 🙂"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07", `\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07`},
		{"a\tb\nc\r", `a\tb\nc\r`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b2J \u0085", `c1 \u009b2J \u0085`},
		{"8-bit csi \x9b2J", `8-bit csi \x9b2J`},
		{"invalid \xff\xfe", `invalid \xff\xfe`},
		{"admin\u202e\u2066gpj.exe", `admin\u202e\u2066gpj.exe`},
		{"marks \u200e\u200f\u061c", `marks \u200e\u200f\u061c`},
		{"seps \u2028\u2029", `seps \u2028\u2029`},
		{"nbsp\u00a0ok", "nbsp\u00a0ok"},
	}
	for _, c := range cases {
		if got := Inert(c.in); got != c.want {
			t.Errorf("Inert(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestInertTextKeepsLayout(t *testing.T) {
	in := "data:\n\tkey: \x1b[2Jvalue\n"
	want := "data:\n\tkey: \\x1b[2Jvalue\n"
	if got := InertText(in); got != want {
		t.Errorf("InertText(%q) = %q, want %q", in, got, want)
	}
}

func TestInertKeepsPrintableWithoutCopy(t *testing.T) {
	s := strings.Repeat("metadata: name ünïcödé ", 100)
	if n := testing.AllocsPerRun(100, func() { _ = Inert(s) }); n != 0 {
		t.Errorf("Inert of printable text allocated %v times, want 0", n)
	}
}

// FuzzInert checks the contract on any input: nothing active is left, and
// text with nothing active comes back as it was.
func FuzzInert(f *testing.F) {
	for _, s := range []string{"", "a", "\x1b[2J", "\u202e", "\xc2\x9b", "\xff", "ok\n\tok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, layout := range []bool{false, true} {
			got := inert(s, layout)
			if i := activeAt(got, layout); i >= 0 {
				t.Fatalf("inert(%q, %v) = %q: active byte at %d", s, layout, got, i)
			}
			if activeAt(s, layout) < 0 && got != s {
				t.Fatalf("inert(%q, %v) = %q: changed text with nothing active", s, layout, got)
			}
		}
	})
}

// activeAt is written apart from firstActive, so that the fuzz target checks
// the escaper against an independent statement of what a terminal acts on.
func activeAt(s string, layout bool) int {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return i
		case layout && (r == '\n' || r == '\t'):
		case r < 0x20, r >= 0x7f && r <= 0x9f:
			return i
		case r == 0x61c, r == 0x200e, r == 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return i
		}
	}
	return -1
}
