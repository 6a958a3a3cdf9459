package common

// Drain waits for a value of ch, then takes the values already waiting
// behind it, up to limit in all, without waiting again: a burst reaches
// the model as one message, which is handled and drawn once. closed says
// ch was closed after the values returned; a closed, empty ch returns no
// value at once.
func Drain[T any](ch <-chan T, limit int) (values []T, closed bool) {
	v, ok := <-ch
	if !ok {
		return nil, true
	}
	values = []T{v}
	for len(values) < limit {
		select {
		case v, ok := <-ch:
			if !ok {
				return values, true
			}
			values = append(values, v)
		default:
			return values, false
		}
	}
	return values, false
}
