package encjson

import "bytes"

// Spans indexes one compact JSON value as encoding/json writes it
// (valid, no space between tokens): where each string, object and array
// ends, so that what walks it never scans a string or skips a value twice,
// however deep.
type Spans struct {
	Src []byte
	// Ends[i] is one past the string, object or array that opens at Src[i].
	Ends []int32
	open []int32
}

// Index fills Ends in one pass over src.
func (x *Spans) Index(src []byte) {
	x.Src = src
	if cap(x.Ends) < len(src) {
		x.Ends = make([]int32, len(src))
	}
	x.Ends, x.open = x.Ends[:len(src)], x.open[:0]
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			end := stringEnd(src, i)
			x.Ends[i] = int32(end)
			i = end - 1
		case '{', '[':
			x.open = append(x.open, int32(i))
		case '}', ']':
			last := len(x.open) - 1
			x.Ends[x.open[last]] = int32(i + 1)
			x.open = x.open[:last]
		}
	}
}

// stringEnd is one past the string that opens at src[i].
func stringEnd(src []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(src[j:], '"')
		if q < 0 {
			return len(src)
		}
		q += j
		k := q - 1
		for src[k] == '\\' {
			k--
		}
		if (q-k)%2 == 1 { // an even number of backslashes before it
			return q + 1
		}
		j = q + 1
	}
}

// ValueEnd is one past the value starting at Src[i].
func (x *Spans) ValueEnd(i int) int {
	switch x.Src[i] {
	case '{', '[', '"':
		return int(x.Ends[i])
	}
	j := i
	for j < len(x.Src) && x.Src[j] != ',' && x.Src[j] != '}' && x.Src[j] != ']' {
		j++
	}
	return j
}
