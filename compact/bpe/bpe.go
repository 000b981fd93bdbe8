package bpe

import (
	_ "embed"
	"math"
	"unicode"
	"unicode/utf8"
)

// table is the cl100k_base vocabulary (see TestTable for its layout):
//
//	uint32 n, uint32 slotBits
//	n × uint32     end offset of each token's bytes (token r: ends[r-1]..ends[r])
//	2^slotBits × uint32  open-addressing hash table of rank+1 (0: empty), FNV-1a
//	token bytes
//
//go:embed cl100k.bin
var table string

var (
	numTokens = int(header(0))
	slotBits  = header(4)
	slotMask  = uint32(1)<<slotBits - 1
	endsAt    = 8
	slotsAt   = endsAt + 4*numTokens
	bytesAt   = slotsAt + 4<<slotBits
)

// header reads the table's header; 0 when there is none (while TestTable
// -update writes it).
func header(off int) uint32 {
	if len(table) < 8 {
		return 0
	}
	return le32(off)
}

func le32(off int) uint32 {
	t := table[off : off+4]
	return uint32(t[0]) | uint32(t[1])<<8 | uint32(t[2])<<16 | uint32(t[3])<<24
}

// token is the bytes of the token of rank r.
func token(r uint32) string {
	start := uint32(0)
	if r > 0 {
		start = le32(endsAt + 4*int(r-1))
	}
	return table[bytesAt+int(start) : bytesAt+int(le32(endsAt+4*int(r)))]
}

func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// rank is the rank of the token s, if s is one.
func rank(s string) (uint32, bool) {
	for h := hash(s) & slotMask; ; h = (h + 1) & slotMask {
		v := le32(slotsAt + 4*int(h))
		if v == 0 {
			return 0, false
		}
		if token(v-1) == s {
			return v - 1, true
		}
	}
}

// Count returns the number of cl100k_base tokens of s, special-token text
// (<|endoftext|>) counted as ordinary text. Invalid UTF-8 is counted as the
// reference does: each byte that does not start a valid sequence as one
// U+FFFD.
func Count(s string) int {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	n := 0
	for i := 0; i < len(s); {
		if s[i] == del {
			i++
			continue
		}
		j := pieceEnd(s, i)
		n += pieceTokens(s[i:j])
		i = j
	}
	return n
}

// pieceTokens is the number of tokens byte-pair encoding makes of one
// piece of the split.
func pieceTokens(p string) int {
	if _, ok := rank(p); ok {
		return 1
	}
	if len(p) < mergeHeapThreshold {
		return mergeScan(p)
	}
	return mergeHeap(p)
}

// The pre-tokenizer: cl100k_base's split pattern,
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// as a backtracking engine (regexp2, .NET semantics) matches it:
// alternatives in order, the first that matches wins.

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r|0x20 && r|0x20 <= 'z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9'
	}
	return unicode.IsNumber(r)
}

// isSpace is .NET's \s: [\f\n\r\t\v\x85\p{Z}], which is Unicode's
// White_Space, as unicode.IsSpace has it.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r'
	}
	return unicode.IsSpace(r)
}

// del, U+007F, is in neither of the pattern's negated classes as the
// reference engine compiles them (an ASCII bitmap that leaves it out), so
// no alternative matches it: the split skips it, and it counts for nothing.
const del = 0x7f

// isOther is [^\s\p{L}\p{N}] as the reference engine has it.
func isOther(r rune) bool { return r != del && !isSpace(r) && !isLetter(r) && !isNumber(r) }

func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// letters returns the end of the run of letters at i.
func letters(s string, i int) int {
	for i < len(s) {
		r, n := decode(s, i)
		if !isLetter(r) {
			break
		}
		i += n
	}
	return i
}

// contraction returns the end of 's, 't, 're, 've, 'm, 'll or 'd (any case)
// after the apostrophe at i-1, or -1.
func contraction(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	r, n := decode(s, i)
	switch r {
	case 's', 'S', 'ſ', 't', 'T', 'm', 'M', 'd', 'D':
		return i + n
	}
	if i+1 >= len(s) {
		return -1
	}
	c1, c2 := s[i]|0x20, s[i+1]|0x20
	switch {
	case c1 == 'r' && c2 == 'e', c1 == 'v' && c2 == 'e', c1 == 'l' && c2 == 'l':
		return i + 2
	}
	return -1
}

// pieceEnd returns the end of the piece of the split that starts at i
// (not at a del).
func pieceEnd(s string, i int) int {
	r, n := decode(s, i)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if r == '\'' {
		if e := contraction(s, i+1); e > 0 {
			return e
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r) {
		return letters(s, i+n)
	}
	if r != '\r' && r != '\n' && r != del && !isNumber(r) && i+n < len(s) {
		if r2, n2 := decode(s, i+n); isLetter(r2) {
			return letters(s, i+n+n2)
		}
	}
	// \p{N}{1,3}
	if isNumber(r) {
		j := i + n
		for k := 1; k < 3 && j < len(s); k++ {
			r2, n2 := decode(s, j)
			if !isNumber(r2) {
				break
			}
			j += n2
		}
		return j
	}
	// ' '?[^\s\p{L}\p{N}]+[\r\n]*
	j := i
	if r == ' ' {
		j = i + n
	}
	if j < len(s) {
		if r2, _ := decode(s, j); isOther(r2) {
			for j < len(s) {
				r3, n3 := decode(s, j)
				if !isOther(r3) {
					break
				}
				j += n3
			}
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
	}
	// What is left starts with a space. \s*[\r\n]+, as the reference
	// engine runs it: the spaces up to the run's first line break, then
	// the line breaks that follow. (It backtracks the greedy \s* to the
	// first line break of the run, not the last: "a \n\n \n" splits into
	// "a", " \n\n", " \n".)
	end, last := i, i
	for end < len(s) {
		r3, n3 := decode(s, end)
		if !isSpace(r3) {
			break
		}
		if r3 == '\r' || r3 == '\n' {
			j := end + 1
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
		last = end
		end += n3
	}
	// \s+(?!\S): the whole run at the end of the text, else all of it but
	// its last space; \s+ for a run of one.
	if end == len(s) || last == i {
		return end
	}
	return last
}

// mergeHeapThreshold is the piece length from which mergeHeap, O(n log n),
// replaces mergeScan, O(n²): both merge the same pairs.
const mergeHeapThreshold = 96

// pairRank is the rank of p[a:b] as one token, or math.MaxUint32.
func pairRank(p string, a, b int) uint32 {
	if r, ok := rank(p[a:b]); ok {
		return r
	}
	return math.MaxUint32
}

// mergeScan merges the leftmost pair of parts with the lowest rank until
// no pair is a token, and returns the number of parts.
func mergeScan(p string) int {
	var buf [mergeHeapThreshold + 1]struct {
		off  int
		rank uint32
	}
	parts := buf[:len(p)+1]
	for i := range parts {
		parts[i].off, parts[i].rank = i, math.MaxUint32
	}
	rankAt := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			return pairRank(p, parts[i].off, parts[i+skip+2].off)
		}
		return math.MaxUint32
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rankAt(i, 0)
	}
	for len(parts) > 1 {
		minRank, minAt := uint32(math.MaxUint32), 0
		for i := range parts[:len(parts)-1] {
			if parts[i].rank < minRank {
				minRank, minAt = parts[i].rank, i
			}
		}
		if minRank == math.MaxUint32 {
			break
		}
		parts[minAt].rank = rankAt(minAt, 1)
		if minAt > 0 {
			parts[minAt-1].rank = rankAt(minAt-1, 1)
		}
		parts = append(parts[:minAt+1], parts[minAt+2:]...)
	}
	return len(parts) - 1
}

// mergeHeap merges as mergeScan does, finding the lowest pair with a heap
// over a linked list of part boundaries.
func mergeHeap(p string) int {
	n := int32(len(p))
	type node struct {
		prev, next int32
		rank       uint32
	}
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: math.MaxUint32}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return math.MaxUint32
		}
		k := nodes[j].next
		if k < 0 {
			return math.MaxUint32
		}
		return pairRank(p, int(i), int(k))
	}
	h := make(pairHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != math.MaxUint32 {
			nodes[i].rank = r
			h = append(h, pair{r, i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.off
		if nodes[i].rank != top.rank {
			continue // stale
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = math.MaxUint32
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		parts--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != math.MaxUint32 {
				h.push(pair{nodes[b].rank, b})
			}
		}
	}
	return parts
}

// pair is a merge candidate: the pair starting at part boundary off.
type pair struct {
	rank uint32
	off  int32
}

// pairHeap is a min-heap of candidates by rank, then offset: among equal
// ranks the leftmost pair merges first.
type pairHeap []pair

func (h pairHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].off < h[b].off
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(c pair) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *pairHeap) pop() pair {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h pairHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h pairHeap) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if right := child + 1; right < len(h) && h.less(right, child) {
			child = right
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}
