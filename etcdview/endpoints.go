package etcdview

// answer is one endpoint's answer to a question asked of every endpoint.
type answer[T any] struct {
	i int // the endpoint's index
	v T
}

// askAll asks every endpoint at once and delivers the answers as they come:
// one member that does not answer must not cost the others their time. The
// channel holds every answer, so a caller that stops reading early leaves no
// goroutine blocked; each ask ends with its own deadline.
func askAll[T any](endpoints []string, ask func(ep string) T) <-chan answer[T] {
	ch := make(chan answer[T], len(endpoints))
	for i, ep := range endpoints {
		go func() { ch <- answer[T]{i, ask(ep)} }()
	}
	return ch
}

// askEach is askAll waiting for every answer, in the endpoints' order.
func askEach[T any](endpoints []string, ask func(ep string) T) []T {
	out := make([]T, len(endpoints))
	ch := askAll(endpoints, ask)
	for range endpoints {
		a := <-ch
		out[a.i] = a.v
	}
	return out
}
