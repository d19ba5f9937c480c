package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Case is one conformance case file.
type Case struct {
	Name string `json:"name"`
	Op   string `json:"op"`
	HLO  string `json:"hlo"`
	// Devices, when positive, makes the case a multi-device one
	// (MULTIDEVICE.md): its args and expected are then one entry per
	// device, decoded into DeviceArgs and DeviceExpected, and Args and
	// Expected stay empty.
	Devices        int        `json:"devices,omitempty"`
	Args           []Value    `json:"args"`
	Expected       Value      `json:"expected"`
	DeviceArgs     [][]Value  `json:"-"`
	DeviceExpected []Value    `json:"-"`
	Tolerance      *Tolerance `json:"tolerance"`
	// Path is the file the case was read from.
	Path string `json:"-"`
}

// Tolerance bounds float differences: |got-want| <= Atol + Rtol*|want|.
type Tolerance struct {
	Atol float64 `json:"atol"`
	Rtol float64 `json:"rtol"`
}

// Value is an array ({shape, data}) or a tuple of values.
type Value struct {
	Shape string  `json:"shape,omitempty"`
	Data  string  `json:"data"`
	Tuple []Value `json:"tuple,omitempty"`
	// IsTuple distinguishes the empty tuple from an array.
	IsTuple bool `json:"-"`
}

// UnmarshalJSON records whether the value was a tuple.
func (v *Value) UnmarshalJSON(b []byte) error {
	var raw struct {
		Shape string           `json:"shape"`
		Data  string           `json:"data"`
		Tuple *json.RawMessage `json:"tuple"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Tuple != nil {
		v.IsTuple = true
		return json.Unmarshal(*raw.Tuple, &v.Tuple)
	}
	if raw.Shape == "" {
		return fmt.Errorf("value has neither shape nor tuple")
	}
	v.Shape, v.Data = raw.Shape, raw.Data
	return nil
}

// LoadCase reads one case file.
func LoadCase(path string) (*Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Case{Path: path}
	if err := c.decode(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// FindCases lists the case files under the given files or directories,
// sorted.
func FindCases(paths ...string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}
