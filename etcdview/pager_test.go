package etcdview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// listSource serves List from sorted keys with values of size bytes each,
// at revision head unless asked for another, and records what it was asked.
type listSource struct {
	Source
	keys  []string
	size  func(i int) int // the bytes of the ith key's value
	head  int64
	asked []PageToken
	revs  []int64
	fail  int // the read that fails, counted from 1; 0: none
	// deadline records whether each read's context had a deadline.
	deadline []bool
}

func (s *listSource) List(ctx context.Context, prefix string, rev int64, page PageToken) (Page, error) {
	s.asked, s.revs = append(s.asked, page), append(s.revs, rev)
	_, ok := ctx.Deadline()
	s.deadline = append(s.deadline, ok)
	if len(s.asked) == s.fail {
		return Page{}, errors.New("etcdserver: request timed out")
	}
	if rev == 0 {
		rev = s.head
	}
	p := Page{Revision: rev}
	for i, k := range s.keys {
		if !strings.HasPrefix(k, prefix) || k <= page.After {
			continue
		}
		if len(p.Keys) == page.Limit {
			p.Next = &PageToken{After: p.Keys[len(p.Keys)-1].Key, Limit: page.Limit, Values: page.Values}
			break
		}
		kv := KV{Key: k, ModRevision: 1}
		if page.Values {
			kv.Value = make([]byte, s.size(i))
		}
		p.Keys = append(p.Keys, kv)
	}
	return p, nil
}

func keysOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/registry/pods/default/p%06d", i)
	}
	return out
}

func collect(t *testing.T, pages Pager) []string {
	t.Helper()
	var got []string
	err := pages(context.Background(), func(p Page) error {
		for _, kv := range p.Keys {
			got = append(got, kv.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestPagesReadsEveryKeyOnceInOrderAsOfTheFirstPagesRevision(t *testing.T) {
	src := &listSource{keys: keysOf(25), head: 90}
	got := collect(t, Pages(src, "/registry/pods/", 0, Paging{Limit: 10}))
	if !slices.Equal(got, src.keys) {
		t.Fatalf("read %d keys, want the %d in order: %v", len(got), len(src.keys), got)
	}
	if want := []int64{0, 90, 90}; !slices.Equal(src.revs, want) {
		t.Fatalf("pages read at revisions %v, want %v: the rest pinned to the first page's", src.revs, want)
	}
	for _, p := range src.asked {
		if p.Values {
			t.Fatalf("a keys-only pager asked for values: %+v", p)
		}
	}
}

func TestPagesOfValuesGrowByTheBytesOfThePageBefore(t *testing.T) {
	// 1 MiB values: after the first page of FirstValuesPage, pages of
	// ValuesPageBytes hold 8 of them.
	src := &listSource{keys: keysOf(30), size: func(int) int { return 1 << 20 }, head: 7}
	got := collect(t, Pages(src, "/registry/", 5, Paging{Values: true}))
	if len(got) != 30 {
		t.Fatalf("read %d keys, want 30", len(got))
	}
	var limits []int
	for _, p := range src.asked {
		if !p.Values {
			t.Fatalf("a page of a values pager asked for keys only: %+v", p)
		}
		limits = append(limits, p.Limit)
	}
	if want := []int{FirstValuesPage, 8, 8, 8, 8}; !slices.Equal(limits, want) {
		t.Fatalf("page limits %v, want %v", limits, want)
	}
	if slices.ContainsFunc(src.revs, func(r int64) bool { return r != 5 }) {
		t.Fatalf("pages read at revisions %v, want all at 5", src.revs)
	}

	// 1 MiB values, then small ones: these come in full pages again.
	mixed := &listSource{keys: keysOf(20_200), size: func(i int) int {
		if i < 100 {
			return 1 << 20
		}
		return 200
	}}
	collect(t, Pages(mixed, "/registry/", 0, Paging{Values: true}))
	if n := len(mixed.asked); n > 20 {
		t.Fatalf("%d pages for 20,200 values: small values after big ones do not come in full pages", n)
	}
	if got := valuesPageLimit(make([]KV, 4)); got != ValuesPage {
		t.Fatalf("after a page of empty values the next holds %d, want %d", got, ValuesPage)
	}
}

func TestPagesStopAtTheFirstError(t *testing.T) {
	src := &listSource{keys: keysOf(25), fail: 2}
	seen := 0
	err := Pages(src, "/registry/", 0, Paging{Limit: 10})(context.Background(), func(p Page) error {
		seen += len(p.Keys)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "timed out") || seen != 10 {
		t.Fatalf("a failed second read gave %v after %d keys, want its error after 10", err, seen)
	}

	src = &listSource{keys: keysOf(25)}
	stop := errors.New("enough")
	err = Pages(src, "/registry/", 0, Paging{Limit: 10})(context.Background(), func(Page) error { return stop })
	if !errors.Is(err, stop) || len(src.asked) != 1 {
		t.Fatalf("yield's error gave %v after %d reads, want it after 1", err, len(src.asked))
	}
}

func TestPagesBoundEachReadByTheTimeout(t *testing.T) {
	src := &listSource{keys: keysOf(25)}
	collect(t, Pages(src, "/registry/", 0, Paging{Limit: 10, Timeout: time.Minute}))
	if slices.Contains(src.deadline, false) || len(src.deadline) != 3 {
		t.Fatalf("reads had deadlines %v, want each of 3 bounded", src.deadline)
	}
	src = &listSource{keys: keysOf(5)}
	collect(t, Pages(src, "/registry/", 0, Paging{}))
	if slices.Contains(src.deadline, true) {
		t.Fatal("with no Timeout a read had a deadline of its own")
	}
}
