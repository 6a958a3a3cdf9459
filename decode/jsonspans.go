package decode

import "bytes"

// jsonSpans indexes one compact JSON value as encoding/json writes it
// (valid, no space between tokens): where each string, object and array
// ends, so that what walks it never scans a string or skips a value twice,
// however deep.
type jsonSpans struct {
	src []byte
	// ends[i] is one past the string, object or array that opens at src[i].
	ends []int32
	open []int32
}

// index fills ends in one pass over src.
func (x *jsonSpans) index(src []byte) {
	x.src = src
	if cap(x.ends) < len(src) {
		x.ends = make([]int32, len(src))
	}
	x.ends, x.open = x.ends[:len(src)], x.open[:0]
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			end := stringEnd(src, i)
			x.ends[i] = int32(end)
			i = end - 1
		case '{', '[':
			x.open = append(x.open, int32(i))
		case '}', ']':
			last := len(x.open) - 1
			x.ends[x.open[last]] = int32(i + 1)
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

// valueEnd is one past the value starting at src[i].
func (x *jsonSpans) valueEnd(i int) int {
	switch x.src[i] {
	case '{', '[', '"':
		return int(x.ends[i])
	}
	j := i
	for j < len(x.src) && x.src[j] != ',' && x.src[j] != '}' && x.src[j] != ']' {
		j++
	}
	return j
}
