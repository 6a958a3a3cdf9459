package yamlout

import (
	"maps"
	"slices"
	"unicode"
	"unicode/utf8"
)

// sortYAMLKeys sorts keys by yamlKeyLess, equal names in their order. A
// mapping has a few to a few dozen keys: an insertion sort beats a general
// one there.
func sortYAMLKeys(keys []yamlKey) {
	less := func(a, b yamlKey) bool {
		if a.name == b.name {
			return a.order < b.order
		}
		return yamlKeyLess(a.name, b.name)
	}
	if len(keys) > 32 {
		slices.SortStableFunc(keys, func(a, b yamlKey) int {
			if less(a, b) {
				return -1
			}
			if less(b, a) {
				return 1
			}
			return 0
		})
		return
	}
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for ; j > 0 && less(k, keys[j-1]); j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
	}
}

// yamlKeyLess is the order go-yaml v2 sorts the keys of a map in
// (keyList.Less, sorter.go): rune by rune; at the first difference letters
// come after everything else and compare as runes, and runs of digits
// compare as numbers, shorter runs first.
func yamlKeyLess(a, b string) bool {
	// Most keys differ first in an ASCII letter or punctuation, where the
	// rune order decides.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) < len(b) // one is the other's prefix, rune for rune
	}
	if ca, cb := a[i], b[i]; ca < utf8.RuneSelf && cb < utf8.RuneSelf && !isASCIIDigit(ca) && !isASCIIDigit(cb) {
		al, bl := isASCIILetter(ca), isASCIILetter(cb)
		if al == bl {
			return ca < cb
		}
		return bl
	}
	return yamlKeyRuneLess(a, b)
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isASCIIDigit(c byte) bool  { return c >= '0' && c <= '9' }

func yamlKeyRuneLess(a, b string) bool {
	ia, ib := 0, 0
	for ia < len(a) && ib < len(b) {
		ra, na := utf8.DecodeRuneInString(a[ia:])
		rb, nb := utf8.DecodeRuneInString(b[ib:])
		if ra == rb {
			ia, ib = ia+na, ib+nb
			continue
		}
		al, bl := unicode.IsLetter(ra), unicode.IsLetter(rb)
		if al && bl {
			return ra < rb
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if ra == '0' || rb == '0' {
			// A zero inside a number that started with another digit
			// counts from 1, as go-yaml counts it.
			for j := ia; j > 0; {
				r, n := utf8.DecodeLastRuneInString(a[:j])
				if !unicode.IsDigit(r) {
					break
				}
				if r != '0' {
					an, bn = 1, 1
					break
				}
				j -= n
			}
		}
		an, da := digitRun(a[ia:], an)
		bn, db := digitRun(b[ib:], bn)
		if an != bn {
			return an < bn
		}
		if da != db {
			return da < db
		}
		return ra < rb
	}
	return ia == len(a) && ib < len(b)
}

// digitRun reads the run of digits s starts with into n, as go-yaml does
// (any Unicode digit, taken as its distance from '0'), and counts them.
func digitRun(s string, n int64) (int64, int) {
	count := 0
	for _, r := range s {
		if !unicode.IsDigit(r) {
			break
		}
		n = n*10 + int64(r-'0')
		count++
	}
	return n, count
}

// TotallyOrdered says whether go-yaml's key order (yamlKeyLess) is a
// strict order on the keys of every map in v, a JSON-shaped value. It is
// not always: a run of digits that overflows int64 compares as a negative
// number, so that "?x" < "1x" < "18446744073709551615" < "?x". go-yaml's
// output then depends on its sort and on the random order of map
// iteration, and has no one reference to compare with: the tests that
// check the emitter against sigs.k8s.io/yaml (here and in decode) skip
// such a value.
func TotallyOrdered(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		keys := slices.Collect(maps.Keys(x))
		for _, a := range keys {
			for _, b := range keys {
				for _, c := range keys {
					if yamlKeyLess(a, b) && yamlKeyLess(b, c) && !yamlKeyLess(a, c) {
						return false
					}
				}
			}
		}
		for _, e := range x {
			if !TotallyOrdered(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !TotallyOrdered(e) {
				return false
			}
		}
	}
	return true
}
