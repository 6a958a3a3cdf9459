package sqlitefile

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// The b-tree page types (fileformat2.html, "B-tree Pages").
const (
	interiorIndex = 0x02
	interiorTable = 0x05
	leafIndex     = 0x0a
	leafTable     = 0x0d
)

// maxDepth is the deepest b-tree SQLite reads (BTCURSOR_MAX_DEPTH): a
// deeper one is a cycle or damage.
const maxDepth = 20

// groupBytes is how many bytes of a page's children a walk reads at once:
// enough for a read to cost less than the copy it makes, and no more, for
// a walk's buffers are memory the process touches for the first time,
// a page fault each 4 KiB (at 512 KiB, most of a scan's faults).
const groupBytes = 64 << 10

// maxLoad is the largest value a walk loads: kine's names and the
// columns the caller reads are far smaller, and a record that claims more
// is read by the caller with SQLite, which streams it.
const maxLoad = 64 << 20

// page is one b-tree page: its kind, its cells' offsets and, of an
// interior page, its right-most child.
type page struct {
	data   []byte
	kind   byte
	cells  int
	ptrs   int // where the cell pointer array starts
	right  uint32
	number uint32
}

// parsePage reads the b-tree header of page n (at 100 on page 1, after the
// file header) and checks its cell pointer array against the page.
func (f *File) parsePage(n uint32, data []byte) (page, error) {
	at := 0
	if n == 1 {
		at = headerSize
	}
	p := page{data: data[:f.usable], kind: data[at], number: n}
	be := binary.BigEndian
	p.cells = int(be.Uint16(data[at+3:]))
	switch p.kind {
	case leafIndex, leafTable:
		p.ptrs = at + 8
	case interiorIndex, interiorTable:
		p.ptrs = at + 12
		p.right = be.Uint32(data[at+8:])
	default:
		return page{}, damaged("page %d is of b-tree type %#x", n, p.kind)
	}
	if p.ptrs+2*p.cells > f.usable {
		return page{}, damaged("page %d claims %d cells", n, p.cells)
	}
	return p, nil
}

// cell is the offset of cell i on the page, checked to lie after the cell
// pointer array.
func (p *page) cell(i int) (int, error) {
	off := int(binary.BigEndian.Uint16(p.data[p.ptrs+2*i:]))
	if off < p.ptrs+2*p.cells || off >= len(p.data) {
		return 0, damaged("cell %d of page %d at offset %d", i, p.number, off)
	}
	return off, nil
}

// child is the left child of the interior cell at off.
func (p *page) child(off int) (uint32, error) {
	if off+4 > len(p.data) {
		return 0, damaged("a cell of page %d runs off it", p.number)
	}
	return binary.BigEndian.Uint32(p.data[off:]), nil
}

// walk is one walk of a b-tree, with buffers of its own: one for the
// children of each level being read, and one for payloads gathered from
// overflow pages.
type walk struct {
	f      *File
	table  bool
	lo, hi int64
	desc   bool
	fn     func(*Record) error
	// seeking says an index walk has not yet met an entry at or after
	// from (IndexFrom): the entries and children before it are skipped.
	seeking bool
	from    []byte
	visits  uint32
	levels  [maxDepth + 1][]byte
	rec     Record
	// scratch holds the start of rec's payload gathered from its overflow
	// pages: the first got bytes, read on from page next.
	scratch []byte
	got     int64
	next    uint32
	ovf     []byte
}

// Walker walks b-trees of a file, one walk at a time, and keeps its
// buffers from one walk to the next: a table read in spans is walked once
// a span, and new buffers for each walk, up to a quarter of a MB a level,
// were most of the memory a read of kine's table took, and of its page
// faults. A Walker is for one goroutine at a time; File's Table and Index
// each walk with one of their own.
type Walker struct{ w walk }

// Walker is a new Walker of f.
func (f *File) Walker() *Walker { return &Walker{walk{f: f}} }

// Table walks the table b-tree whose root page is root, and calls fn with
// every row whose rowid is in [lo, hi], in rowid order, from the highest
// when desc. A child whose rowids lie outside is not read.
func (wk *Walker) Table(root uint32, lo, hi int64, desc bool, fn func(*Record) error) error {
	return wk.walk(root, true, lo, hi, desc, fn)
}

// Index walks the index b-tree whose root page is root and calls fn with
// every entry, in the index's order: an interior page's entries between
// the children they divide.
func (wk *Walker) Index(root uint32, fn func(*Record) error) error {
	return wk.walk(root, false, math.MinInt64, math.MaxInt64, false, fn)
}

// IndexFrom is Index from the first entry whose first column sorts at or
// after from, a TEXT, as SQL's `WHERE col >= from` with the index picks
// them: the children of an interior page that hold only entries before
// it are not read.
func (wk *Walker) IndexFrom(root uint32, from []byte, fn func(*Record) error) error {
	wk.w.seeking, wk.w.from = true, from
	defer func() { wk.w.seeking, wk.w.from = false, nil }()
	return wk.Index(root, fn)
}

// Table is Walker's Table, with a Walker of its own.
func (f *File) Table(root uint32, lo, hi int64, desc bool, fn func(*Record) error) error {
	return f.Walker().Table(root, lo, hi, desc, fn)
}

// Index is Walker's Index, with a Walker of its own.
func (f *File) Index(root uint32, fn func(*Record) error) error {
	return f.Walker().Index(root, fn)
}

// IndexFrom is Walker's IndexFrom, with a Walker of its own.
func (f *File) IndexFrom(root uint32, from []byte, fn func(*Record) error) error {
	return f.Walker().IndexFrom(root, from, fn)
}

func (wk *Walker) walk(root uint32, table bool, lo, hi int64, desc bool, fn func(*Record) error) error {
	w := &wk.w
	w.table, w.lo, w.hi, w.desc, w.fn, w.visits = table, lo, hi, desc, fn, 0
	err := w.root(root)
	w.fn = nil
	return err
}

func (w *walk) root(n uint32) error {
	if err := w.f.checkPage(n); err != nil {
		return err
	}
	buf := w.buffer(0, 1)
	if err := w.f.readPages([]uint32{n}, buf); err != nil {
		return err
	}
	return w.page(n, buf, 0)
}

// buffer is level's buffer, with room for pages pages.
func (w *walk) buffer(level, pages int) []byte {
	n := pages * w.f.pageSize
	if cap(w.levels[level]) < n {
		w.levels[level] = make([]byte, n)
	}
	return w.levels[level][:n]
}

// page walks page n, whose bytes are data, at depth.
func (w *walk) page(n uint32, data []byte, depth int) error {
	if w.visits++; w.visits > w.f.pages {
		return damaged("a b-tree visits more pages than the file's %d: a cycle", w.f.pages)
	}
	p, err := w.f.parsePage(n, data)
	if err != nil {
		return err
	}
	if table := p.kind == leafTable || p.kind == interiorTable; table != w.table {
		return damaged("page %d of b-tree type %#x in a b-tree of the other kind", n, p.kind)
	}
	switch p.kind {
	case leafTable, leafIndex:
		return w.leaf(&p)
	case interiorTable:
		return w.tableInterior(&p, depth)
	}
	return w.indexInterior(&p, depth)
}

func (w *walk) leaf(p *page) error {
	for j := range p.cells {
		i := j
		if w.desc {
			i = p.cells - 1 - j
		}
		off, err := p.cell(i)
		if err != nil {
			return err
		}
		if err := w.record(p, off); err != nil {
			return err
		}
		if w.table && (w.rec.Rowid < w.lo || w.rec.Rowid > w.hi) {
			continue
		}
		if w.seeking {
			before, err := w.rec.before(w.from)
			if err != nil {
				return err
			}
			if before {
				continue
			}
			w.seeking = false
		}
		if err := w.fn(&w.rec); err != nil {
			return err
		}
	}
	return nil
}

// tableInterior walks the children of p whose rowids may lie in the
// walk's range: cell i's child holds the rowids up to its key, above the
// key before it, and the right-most child those above the last key.
func (w *walk) tableInterior(p *page, depth int) error {
	var kids []uint32
	below := int64(math.MinInt64) // the key before the child: its rowids are above it
	for i := range p.cells + 1 {
		child, key := p.right, int64(math.MaxInt64)
		if i < p.cells {
			off, err := p.cell(i)
			if err != nil {
				return err
			}
			if child, err = p.child(off); err != nil {
				return err
			}
			k, n := varint(p.data[off+4:])
			if n == 0 {
				return damaged("a cell of page %d runs off it", p.number)
			}
			key = int64(k)
		}
		if key >= w.lo && below < w.hi {
			kids = append(kids, child)
		}
		below = key
		if below >= w.hi {
			break
		}
	}
	return w.children(kids, depth+1, nil)
}

// indexInterior walks the children of p in order, each cell's entry after
// the child whose entries come before it. While seeking, it starts at the
// first cell at or after from: the children before it hold entries before
// it only.
func (w *walk) indexInterior(p *page, depth int) error {
	first := 0
	if w.seeking {
		var err error
		if first, err = w.firstCellFrom(p); err != nil {
			return err
		}
	}
	kids := make([]uint32, 0, p.cells+1-first)
	for i := first; i < p.cells; i++ {
		off, err := p.cell(i)
		if err != nil {
			return err
		}
		kid, err := p.child(off)
		if err != nil {
			return err
		}
		kids = append(kids, kid)
	}
	kids = append(kids, p.right)
	return w.children(kids, depth+1, func(j int) error {
		i := first + j
		if i == p.cells {
			return nil
		}
		off, _ := p.cell(i)
		if err := w.record(p, off+4); err != nil {
			return err
		}
		// The cells from first on sort at or after from.
		w.seeking = false
		return w.fn(&w.rec)
	})
}

// firstCellFrom is the first cell of interior index page p whose entry's
// first column sorts at or after the walk's from, by binary search: the
// cells are in the index's order.
func (w *walk) firstCellFrom(p *page) (int, error) {
	lo, hi := 0, p.cells
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		off, err := p.cell(mid)
		if err != nil {
			return 0, err
		}
		if err := w.record(p, off+4); err != nil {
			return 0, err
		}
		before, err := w.rec.before(w.from)
		if err != nil {
			return 0, err
		}
		if before {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// children reads kids, pages in key order, a group at a time into the
// buffer of level, and walks each, in the walk's order; after the walk of
// kids[i], then calls after(i).
func (w *walk) children(kids []uint32, level int, after func(int) error) error {
	if level > maxDepth {
		return damaged("a b-tree deeper than %d pages", maxDepth)
	}
	for _, k := range kids {
		if err := w.f.checkPage(k); err != nil {
			return err
		}
	}
	group := max(1, groupBytes/w.f.pageSize)
	for start := 0; start < len(kids); start += group {
		lo, hi := start, min(start+group, len(kids))
		if w.desc {
			lo, hi = len(kids)-hi, len(kids)-start
		}
		nums := kids[lo:hi]
		buf, first, err := w.readGroup(level, nums)
		if err != nil {
			return err
		}
		for j := range nums {
			if w.desc {
				j = len(nums) - 1 - j
			}
			ps := w.f.pageSize
			at := j
			if first != 0 {
				at = int(nums[j] - first)
			}
			if err := w.page(nums[j], buf[at*ps:(at+1)*ps], level); err != nil {
				return err
			}
			if after != nil {
				if err := after(lo + j); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readGroup reads pages nums into the buffer of level. When they ascend
// within twice as many pages as they are, it reads that stretch, the
// pages between them with it, and returns the first page of it: a table
// SQLite appended to lies in order, a few pages of its indexes between
// its leaves, and one read of a stretch cost less than one read a run of
// consecutive pages, whose system calls were more than the copy. Else
// (first 0) page i is at buf[i*pageSize:].
func (w *walk) readGroup(level int, nums []uint32) (buf []byte, first uint32, err error) {
	lo, hi := nums[0], nums[len(nums)-1]
	if hi >= lo && int(hi-lo) < 2*len(nums) && slices.IsSorted(nums) {
		buf = w.buffer(level, int(hi-lo)+1)
		return buf, lo, w.f.readStretch(lo, buf)
	}
	buf = w.buffer(level, len(nums))
	return buf, 0, w.f.readPages(nums, buf)
}

// record reads the cell at off of leaf or interior page p (past an index
// interior cell's child) into w.rec: its payload size, a table leaf's
// rowid, the payload on the page, and its first overflow page.
func (w *walk) record(p *page, off int) error {
	b := p.data[off:]
	size, n := varint(b)
	if n == 0 {
		return damaged("a cell of page %d runs off it", p.number)
	}
	b = b[n:]
	w.rec = Record{w: w, types: w.rec.types, ends: w.rec.ends}
	if p.kind == leafTable {
		id, n := varint(b)
		if n == 0 {
			return damaged("a cell of page %d runs off it", p.number)
		}
		w.rec.Rowid, b = int64(id), b[n:]
	}
	if size > uint64(w.f.pages)*uint64(w.f.usable) {
		return damaged("a cell of page %d holds %d bytes, more than the file", p.number, size)
	}
	w.rec.size = int64(size)
	local := w.f.localSize(w.rec.size, p.kind == leafTable)
	if int64(len(b)) < local {
		return damaged("a cell of page %d runs off it", p.number)
	}
	w.rec.local = b[:local:local]
	if local < w.rec.size {
		if int64(len(b)) < local+4 {
			return damaged("a cell of page %d runs off it", p.number)
		}
		w.rec.overflow = binary.BigEndian.Uint32(b[local:])
	}
	w.got = 0
	return w.rec.parse()
}

// localSize is how much of a payload of size bytes lies on the cell's
// page (btreeParseCellAdjustSizeForOverflow): all of it up to a maximum,
// else a minimum and as much more as fills the last overflow page.
func (f *File) localSize(size int64, table bool) int64 {
	u := int64(f.usable)
	most := u - 35
	if !table {
		most = (u-12)*64/255 - 23
	}
	if size <= most {
		return size
	}
	least := (u-12)*32/255 - 23
	if k := least + (size-least)%(u-4); k <= most {
		return k
	}
	return least
}

// gather returns the first n bytes of r's payload, read on from its
// overflow pages as far as n.
func (w *walk) gather(r *Record, n int64) ([]byte, error) {
	if n > maxLoad {
		return nil, errTooLarge(n)
	}
	if w.got == 0 {
		w.scratch = append(w.scratch[:0], r.local...)
		w.got, w.next = int64(len(r.local)), r.overflow
	}
	ps := w.f.pageSize
	for w.got < n {
		if w.next == 0 {
			return nil, damaged("an overflow chain ends %d bytes into a payload of %d", w.got, r.size)
		}
		if err := w.f.checkPage(w.next); err != nil {
			return nil, err
		}
		if cap(w.ovf) < ps {
			w.ovf = make([]byte, ps)
		}
		if err := w.f.readPages([]uint32{w.next}, w.ovf[:ps]); err != nil {
			return nil, err
		}
		take := min(int64(w.f.usable-4), r.size-w.got)
		w.scratch = append(w.scratch, w.ovf[4:4+take]...)
		w.got += take
		w.next = binary.BigEndian.Uint32(w.ovf)
	}
	return w.scratch[:w.got:w.got], nil
}

func errTooLarge(n int64) error {
	return fmt.Errorf("%w: a record whose values read take %d bytes, more than %d", ErrUnsupported, n, maxLoad)
}
