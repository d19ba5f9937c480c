package hlo

import (
	"reflect"
	"testing"
)

// Expected lists worked by hand from XLA's IotaReplicaGroupList
// definition (iota, reshape, transpose, cut).
func TestIotaGroupsExpand(t *testing.T) {
	cases := []struct {
		in   string
		want [][]int64
	}{
		{"[2,4]<=[8]", [][]int64{{0, 1, 2, 3}, {4, 5, 6, 7}}},
		{"[1,4]<=[4]", [][]int64{{0, 1, 2, 3}}},
		{"[4,2]<=[2,4]T(1,0)", [][]int64{{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
		{"[2,4]<=[4,2]T(1,0)", [][]int64{{0, 2, 4, 6}, {1, 3, 5, 7}}},
		{"[2,2]<=[2,2]T(1,0)", [][]int64{{0, 2}, {1, 3}}},
		{"[4,2]<=[2,2,2]T(2,0,1)", [][]int64{{0, 2}, {4, 6}, {1, 3}, {5, 7}}},
	}
	for _, c := range cases {
		got, err := IotaReplicaGroups(c.in).Expand()
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"[2,4]", "[2,4]<=[7]", "[2,4]<=[2,4]T(0,0)", "[x]<=[4]", "[2,2]<=[]"} {
		if _, err := IotaReplicaGroups(bad).Expand(); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
