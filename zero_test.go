package axle_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/axle-ml/axle"
)

// TestZeroValues calls every exported method of the API's types on a nil
// receiver and on a zero value (with zero arguments, a nil buffer in
// variadic buffer lists, a live context): none panics, and every method
// that returns an error returns one. The method list comes from
// reflection, so a method added later is covered without editing this.
func TestZeroValues(t *testing.T) {
	receivers := []any{
		(*axle.Client)(nil), &axle.Client{},
		(*axle.Buffer)(nil), &axle.Buffer{},
		(*axle.Executable)(nil), &axle.Executable{},
		(*axle.Device)(nil), &axle.Device{},
		(*axle.ModuleRunner)(nil), &axle.ModuleRunner{},
	}
	errType := reflect.TypeFor[error]()
	for _, r := range receivers {
		v := reflect.ValueOf(r)
		kind := "zero"
		if v.IsNil() {
			kind = "nil"
		}
		for i := range v.NumMethod() {
			m, name := v.Method(i), v.Type().Method(i).Name
			label := kind + " " + v.Type().String() + "." + name
			outs := callNoPanic(t, label, m)
			if outs == nil {
				continue
			}
			if n := len(outs); n > 0 && outs[n-1].Type() == errType && outs[n-1].IsNil() && !okOnZero[name] {
				t.Errorf("%s returned no error", label)
			}
		}
	}
	for _, f := range []func() error{
		func() error { _, err := axle.BufferFromSlice[float32](nil, []float32{1}); return err },
		func() error { _, err := axle.BufferFromScalar[int32](&axle.Client{}, 1); return err },
		func() error { _, err := axle.ToSlice[float32](nil); return err },
		func() error { _, err := axle.ToSlice[float32](&axle.Buffer{}); return err },
	} {
		if err := f(); err == nil {
			t.Error("a generic function took a nil or zero value without an error")
		}
	}
}

// okOnZero are the error-returning methods for which doing nothing is
// success on nil and zero values (none so far).
var okOnZero = map[string]bool{}

// callNoPanic calls m with zero arguments and reports a panic.
func callNoPanic(t *testing.T, label string, m reflect.Value) (outs []reflect.Value) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", label, r)
			outs = nil
		}
	}()
	mt := m.Type()
	args := make([]reflect.Value, mt.NumIn())
	for i := range args {
		in := mt.In(i)
		switch {
		case in == reflect.TypeFor[context.Context]():
			args[i] = reflect.ValueOf(context.Background())
		case mt.IsVariadic() && i == len(args)-1 && in.Elem() == reflect.TypeFor[*axle.Buffer]():
			args[i] = reflect.ValueOf([]*axle.Buffer{nil})
		default:
			args[i] = reflect.Zero(in)
		}
	}
	if mt.IsVariadic() {
		return m.CallSlice(args)
	}
	return m.Call(args)
}

// TestNilBufferArguments: nil buffers in argument lists are argument
// errors of a live executable, not panics.
func TestNilBufferArguments(t *testing.T) {
	x := compile(t, newClient(t, "cpu"), twoParams)
	for _, donate := range [][]int{nil, {0}, {1}, {0, 1}} {
		_, err := x.ExecuteWith(axle.ExecuteOptions{Donate: donate}, nil, nil)
		if err == nil || errors.Is(err, axle.ErrDonated) {
			t.Errorf("donating %v of nil buffers: %v", donate, err)
		}
	}
}
