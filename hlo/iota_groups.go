package hlo

import (
	"fmt"
	"strconv"
	"strings"
)

// Expand lists the groups of the compact form `[G,S]<=[d0,d1,...]T(perm)`:
// the numbers 0..N-1 laid out with dimensions d, transposed by perm (when
// written), read in row-major order and cut into G groups of S (XLA's
// IotaReplicaGroupList).
func (g IotaReplicaGroups) Expand() ([][]int64, error) {
	s := strings.ReplaceAll(string(g), " ", "")
	head, tail, ok := strings.Cut(s, "<=")
	if !ok {
		return nil, fmt.Errorf("iota replica groups %q: no <=", string(g))
	}
	gs, err := bracketInts(head)
	if err != nil || len(gs) != 2 || gs[0] < 1 || gs[1] < 1 {
		return nil, fmt.Errorf("iota replica groups %q: want [groups,size] before <=", string(g))
	}
	dimText, permText, hasPerm := strings.Cut(tail, "T")
	dims, err := bracketInts(dimText)
	if err != nil || len(dims) == 0 {
		return nil, fmt.Errorf("iota replica groups %q: bad reshape dimensions", string(g))
	}
	perm := make([]int64, len(dims))
	for i := range perm {
		perm[i] = int64(i)
	}
	if hasPerm {
		if perm, err = parenInts(permText); err != nil || !isPermutation(perm, len(dims)) {
			return nil, fmt.Errorf("iota replica groups %q: bad transpose", string(g))
		}
	}
	ids := transposedIota(dims, perm)
	if int64(len(ids)) != gs[0]*gs[1] {
		return nil, fmt.Errorf("iota replica groups %q: %d ids for %d groups of %d", string(g), len(ids), gs[0], gs[1])
	}
	out := make([][]int64, gs[0])
	for i := range out {
		out[i] = ids[int64(i)*gs[1] : int64(i+1)*gs[1]]
	}
	return out, nil
}

// transposedIota is iota(prod(dims)) shaped dims, transposed by perm,
// flattened.
func transposedIota(dims, perm []int64) []int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	if n <= 0 || n > 1<<24 {
		return nil
	}
	strides := make([]int64, len(dims))
	st := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = st
		st *= dims[i]
	}
	out := make([]int64, 0, n)
	idx := make([]int64, len(dims)) // index in the transposed order
	for range n {
		var src int64
		for k, p := range perm {
			src += idx[k] * strides[p]
		}
		out = append(out, src)
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < dims[perm[k]] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

func bracketInts(s string) ([]int64, error) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("want [..], got %q", s)
	}
	return splitInts(s[1 : len(s)-1])
}

func parenInts(s string) ([]int64, error) {
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return nil, fmt.Errorf("want (..), got %q", s)
	}
	return splitInts(s[1 : len(s)-1])
}

func splitInts(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// CollectiveReplicaGroups returns a collective's replica groups as
// lists, expanding the iota form; nil when none are written (every
// participant in one group).
func CollectiveReplicaGroups(in *Instruction) ([][]int64, error) {
	v, ok := in.Attr("replica_groups")
	if !ok {
		return nil, nil
	}
	switch g := v.(type) {
	case [][]int64:
		return g, nil
	case IotaReplicaGroups:
		return g.Expand()
	}
	return nil, fmt.Errorf("%s: replica_groups in a form Axle cannot read", in.Name)
}
