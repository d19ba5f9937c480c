package jit

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"
)

// fullProgram sets every field of a Program, every list holding
// elements, so that each field and element can be changed on its own.
// It need not be valid: keys are made of a program's plain contents.
func fullProgram() *Program {
	return &Program{
		Values:         []Value{{Op: Input, Args: [3]int{1, 2, 3}, Arg: 1, Value: 1.5, Off: 2}, {Op: Add}},
		Inputs:         2,
		Scalars:        1,
		Outputs:        []int{1},
		InputTypes:     []Type{F32, BF16},
		OutputTypes:    []Type{BF16},
		RowLen:         8,
		RowScalars:     []int{0},
		PrefetchInputs: []int{1},
		PrefetchAhead:  512,
		RowFolds:       []RowFold{{Op: Max, Value: 1}},
		CachedOutputs:  []int{0},
		Strided:        true,
		lanes:          16,
		unroll:         2,
	}
}

// eachChange calls check after each of a set of changes to v, undoing
// each before the next: every number and flag changed, every list made
// longer and each of its elements changed, through every field of a
// struct, unexported ones too. A kind of value it does not know fails
// the test: a field was added that programKey must be taught to encode
// (and then this function to change).
func eachChange(t *testing.T, path string, v reflect.Value, check func(path string)) {
	t.Helper()
	switch v.Kind() {
	case reflect.Bool:
		old := v.Bool()
		v.SetBool(!old)
		check(path)
		v.SetBool(old)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		old := v.Int()
		v.SetInt(old + 1)
		check(path)
		v.SetInt(old)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		old := v.Uint()
		v.SetUint(old + 1)
		check(path)
		v.SetUint(old)
	case reflect.Float32, reflect.Float64:
		old := v.Float()
		v.SetFloat(old + 1)
		check(path)
		v.SetFloat(old)
	case reflect.Array:
		for i := range v.Len() {
			eachChange(t, fmt.Sprintf("%s[%d]", path, i), v.Index(i), check)
		}
	case reflect.Slice:
		eachSliceChange(t, path, v, check)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // settable, if unexported
			eachChange(t, path+"."+v.Type().Field(i).Name, f, check)
		}
	default:
		t.Fatalf("%s is a %s: teach programKey to encode it, and eachChange to change it", path, v.Kind())
	}
}

// eachSliceChange is eachChange's for a list.
func eachSliceChange(t *testing.T, path string, v reflect.Value, check func(path string)) {
	t.Helper()
	if v.Len() == 0 {
		t.Fatalf("%s is empty in the program changed: give it an element", path)
	}
	old := v.Slice(0, v.Len())
	longer := reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()+1), old) // a copy: old's array unchanged
	v.Set(reflect.Append(longer, reflect.Zero(v.Type().Elem())))
	check(path + " lengthened")
	v.Set(old)
	for i := range v.Len() {
		eachChange(t, fmt.Sprintf("%s[%d]", path, i), v.Index(i), check)
	}
}

// TestKeyCoversEveryField changes each field of a program (of its
// values and row folds, unexported ones included), of the target, and
// the streaming flag, one at a time, and checks that each change gives
// another key: the generator reads them all, so a field the key missed
// could give two programs' different code one key.
func TestKeyCoversEveryField(t *testing.T) {
	p, tg := fullProgram(), target{wide: true, maxPinned: 3, shortcuts: true}
	base := programKey(p, false, tg)
	changes := 0
	check := func(path string) {
		changes++
		if programKey(p, false, tg) == base {
			t.Errorf("changing %s leaves the key as it was", path)
		}
	}
	eachChange(t, "Program", reflect.ValueOf(p).Elem(), check)
	eachChange(t, "target", reflect.ValueOf(&tg).Elem(), check)
	if programKey(p, true, tg) == base {
		t.Error("the streaming loop's key is the other loop's")
	}
	if programKey(p, false, tg) != base || !reflect.DeepEqual(p, fullProgram()) {
		t.Fatal("the changes were not undone")
	}
	if changes < 30 {
		t.Fatalf("only %d changes made", changes)
	}
}

// Programs alike but for nil and empty lists (which the generator
// reads alike) share a key, so the book needs one entry for them.
func TestKeyNilListsAreEmpty(t *testing.T) {
	p := &Program{Inputs: 1, Values: []Value{{Op: Input}, {Op: Exp}}}
	q := *p
	q.Outputs, q.InputTypes, q.RowScalars, q.RowFolds = []int{}, []Type{}, []int{}, []RowFold{}
	if programKey(p, false, target{}) != programKey(&q, false, target{}) {
		t.Fatal("nil and empty lists give different keys")
	}
}
