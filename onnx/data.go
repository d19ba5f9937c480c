package onnx

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/axle-ml/axle/hlo"

	"github.com/axle-ml/axle/onnx/onnxpb"
)

// ReadValueFile reads a serialized TensorProto, SequenceProto or
// OptionalProto (as the backend tests' input_N.pb and output_N.pb are),
// choosing the message by t's kind (a tensor when t is nil).
func ReadValueFile(path string, t *Type) (*Value, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := ReadValue(data, t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// ReadValue decodes a serialized value of type t (a tensor when t is nil).
func ReadValue(data []byte, t *Type) (*Value, error) {
	kind := KindTensor
	if t != nil {
		kind = t.Kind
	}
	switch kind {
	case KindSequence:
		var sp onnxpb.SequenceProto
		if err := proto.Unmarshal(data, &sp); err != nil {
			return nil, fmt.Errorf("not a SequenceProto: %w", err)
		}
		return decodeSequence(&sp, 0)
	case KindOptional:
		var op onnxpb.OptionalProto
		if err := proto.Unmarshal(data, &op); err != nil {
			return nil, fmt.Errorf("not an OptionalProto: %w", err)
		}
		return decodeOptional(&op, 0)
	case KindMap:
		var mp onnxpb.MapProto
		if err := proto.Unmarshal(data, &mp); err != nil {
			return nil, fmt.Errorf("not a MapProto: %w", err)
		}
		return decodeMap(&mp, 0)
	}
	var tp onnxpb.TensorProto
	if err := proto.Unmarshal(data, &tp); err != nil {
		return nil, fmt.Errorf("not a TensorProto: %w", err)
	}
	tt, err := DecodeTensor(&tp, "")
	if err != nil {
		return nil, err
	}
	return TensorValue(tt), nil
}

func decodeSequence(sp *onnxpb.SequenceProto, depth int) (*Value, error) {
	if depth > maxGraphDepth {
		return nil, fmt.Errorf("sequence nested too deep")
	}
	v := &Value{Kind: KindSequence}
	for _, tp := range sp.TensorValues {
		t, err := DecodeTensor(tp, "")
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, TensorValue(t))
		v.ElemType = t.ElemType()
	}
	for _, s := range sp.SequenceValues {
		e, err := decodeSequence(s, depth+1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, e)
	}
	for _, o := range sp.OptionalValues {
		e, err := decodeOptional(o, depth+1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, e)
	}
	for _, m := range sp.MapValues {
		e, err := decodeMap(m, depth+1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, e)
	}
	if len(sp.SparseTensorValues) > 0 {
		return nil, fmt.Errorf("sequences of sparse tensors are not supported")
	}
	return v, nil
}

// decodeMap decodes a MapProto: int64 or string keys, and its values
// (a SequenceProto, one a key).
func decodeMap(mp *onnxpb.MapProto, depth int) (*Value, error) {
	if depth > maxGraphDepth {
		return nil, fmt.Errorf("map nested too deep")
	}
	var keys *Tensor
	switch {
	case len(mp.StringKeys) > 0 || onnxpb.TensorProto_DataType(mp.GetKeyType()) == onnxpb.TensorProto_STRING:
		strs := make([]string, len(mp.StringKeys))
		for i, k := range mp.StringKeys {
			strs[i] = string(k)
		}
		t, err := NewStringTensor(strs, int64(len(strs)))
		if err != nil {
			return nil, err
		}
		keys = t
	default:
		l := hlo.NewLiteral(hlo.ArrayShape(hlo.S64, int64(len(mp.Keys))))
		for i, k := range mp.Keys {
			l.SetInt64(i, k)
		}
		keys = TensorOf(l)
	}
	vals := &Value{Kind: KindSequence}
	if mp.Values != nil {
		var err error
		if vals, err = decodeSequence(mp.Values, depth+1); err != nil {
			return nil, err
		}
	}
	if len(vals.Elems) != int(keys.Dims()[0]) {
		return nil, fmt.Errorf("map of %d keys and %d values", keys.Dims()[0], len(vals.Elems))
	}
	return MapValue(keys, vals.Elems), nil
}

func decodeOptional(op *onnxpb.OptionalProto, depth int) (*Value, error) {
	if depth > maxGraphDepth {
		return nil, fmt.Errorf("optional nested too deep")
	}
	v := &Value{Kind: KindOptional}
	switch {
	case op.TensorValue != nil:
		t, err := DecodeTensor(op.TensorValue, "")
		if err != nil {
			return nil, err
		}
		v.Elem = TensorValue(t)
		v.ElemType = t.ElemType()
	case op.SequenceValue != nil:
		s, err := decodeSequence(op.SequenceValue, depth+1)
		if err != nil {
			return nil, err
		}
		v.Elem = s
		v.ElemType = s.ElemType
	case op.OptionalValue != nil:
		o, err := decodeOptional(op.OptionalValue, depth+1)
		if err != nil {
			return nil, err
		}
		v.Elem = o
	}
	return v, nil
}
