package yamlout

import (
	"strconv"
	"strings"
	"time"
)

// numberText is how go-yaml writes the JSON literal s (a number, true,
// false or null) after reading it as a plain scalar: integers as integers
// (up to uint64), other numbers as the shortest float that reads back
// ("1e+21", "1e-06", "0.5"), so 3.0, which encoding/json writes as 3,
// comes back as 3.
func (e *yamlEmitter) numberText(s string) string {
	switch s {
	case "true", "false", "null":
		return s
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(v, 10) // "-0" is 0
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return strconv.FormatUint(v, 10)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && yamlFloatSyntax(s) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return s // beyond float64: go-yaml keeps the text, as a string
}

// yamlScalarTags are the plain scalars go-yaml reads as something other
// than a string by their spelling alone (resolve.go's resolveMap).
var yamlScalarTags = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
	"": true, "~": true, "null": true, "Null": true, "NULL": true,
	".nan": true, ".NaN": true, ".NAN": true,
	".inf": true, ".Inf": true, ".INF": true, "+.inf": true, "+.Inf": true, "+.INF": true,
	"-.inf": true, "-.Inf": true, "-.INF": true,
}

// yamlMapHint marks the first bytes of the bools and nulls go-yaml knows
// by name ("yes", "On", "~"): resolveTable's 'M'.
var yamlMapHint = [256]bool{'y': true, 'Y': true, 'n': true, 'N': true, 't': true, 'T': true,
	'f': true, 'F': true, 'o': true, 'O': true, '~': true}

// plainReadsAsString says whether go-yaml would read s, written plain, as
// the string s (resolve with no tag): not a bool, null, number or
// timestamp, nor a base-60 float, which it quotes for other parsers.
// Only a first byte that go-yaml's resolveTable marks leads to a check.
func plainReadsAsString(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '.':
		if yamlScalarTags[s] {
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case yamlMapHint[c]:
		return len(s) > len("false") || !yamlScalarTags[s] // the longest of them
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return !yamlScalarTags[s] && !yamlTimestamp(s) && !yamlNumber(strings.ReplaceAll(s, "_", "")) && !yamlBase60Float(s)
	}
	return true
}

// yamlNumber says whether go-yaml reads plain, s with its underscores
// removed, as an integer or a float.
func yamlNumber(plain string) bool {
	if couldBeInt(plain) {
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return true
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return true
		}
	}
	if yamlFloatSyntax(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return true
		}
		_, err := strconv.ParseUint(rest, 2, 64)
		return err == nil
	}
	if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		_, err := strconv.ParseInt("-"+rest, 2, 64)
		return err == nil
	}
	return false
}

// couldBeInt is false when strconv.ParseInt and ParseUint with base 0
// certainly fail: a byte no prefix, sign or digit of any base can be. It
// spares most strings that start with a digit (names, UIDs, addresses) two
// failed parses and their errors.
func couldBeInt(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		case c == 'x' || c == 'X' || c == 'o' || c == 'O':
		case (c == '+' || c == '-') && i == 0:
		default:
			return false
		}
	}
	return true
}

// yamlFloatSyntax matches go-yaml's yamlStyleFloat,
// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func yamlFloatSyntax(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// yamlTimestampLayouts are the timestamps go-yaml reads from a plain scalar
// (resolve.go's allowedTimestampFormats).
var yamlTimestampLayouts = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// yamlTimestamp says whether go-yaml reads s as a timestamp: four digits, a
// dash, then one of its layouts.
func yamlTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	if utcSeconds(s) {
		return true
	}
	for _, layout := range yamlTimestampLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// yamlBase60Float matches go-yaml's base60float,
// ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$: YAML 1.1's sexagesimal
// numbers ("1:20"), which go-yaml quotes though it reads them as strings.
func yamlBase60Float(s string) bool {
	if strings.IndexByte(s, ':') < 0 {
		return false
	}
	i := 0
	if s[i] == '-' || s[i] == '+' {
		i++
	}
	isDigit := func(j int) bool { return j < len(s) && s[j] >= '0' && s[j] <= '9' }
	if !isDigit(i) {
		return false
	}
	for i++; isDigit(i) || i < len(s) && s[i] == '_'; i++ {
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		i++
		// [0-5]?[0-9]: one digit, or two with the first at most 5.
		switch {
		case isDigit(i) && s[i] <= '5' && isDigit(i+1):
			i += 2
		case isDigit(i):
			i++
		default:
			return false
		}
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		for i++; isDigit(i) || i < len(s) && s[i] == '_'; i++ {
		}
	}
	return i == len(s)
}

// utcSeconds says whether s is a time as Kubernetes writes metav1.Time,
// "2006-01-02T15:04:05Z", valid: a form the first of go-yaml's layouts
// reads, recognised without time.Parse, which is most of the cost of
// writing the timestamps of an object.
func utcSeconds(s string) bool {
	if len(s) != len("2006-01-02T15:04:05Z") || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return false
	}
	num := func(i int) int {
		if s[i] < '0' || s[i] > '9' || s[i+1] < '0' || s[i+1] > '9' {
			return -1
		}
		return int(s[i]-'0')*10 + int(s[i+1]-'0')
	}
	month, day := num(5), num(8)
	return month >= 1 && month <= 12 && day >= 1 && day <= 28 &&
		num(11) >= 0 && num(11) < 24 && num(14) >= 0 && num(14) < 60 && num(17) >= 0 && num(17) < 60
}
