package ops

import (
	"github.com/axle-ml/axle/hlo"
	"github.com/axle-ml/axle/onnx"
	"github.com/axle-ml/axle/onnx/onnxpb"
)

// Optional ops run on the host.

func init() {
	Register(Op{Name: "Optional", Since: 15, Host: hostOptional})
	Register(Op{Name: "OptionalHasElement", Since: 15, Host: hostOptionalHasElement})
	Register(Op{Name: "OptionalGetElement", Since: 15, Host: hostOptionalGetElement})
}

func optInput(h *HostCtx, i int) *onnx.Value {
	if i < len(h.In) {
		return h.In[i]
	}
	return nil
}

func hostOptional(h *HostCtx) error {
	v := optInput(h, 0)
	et := onnx.Undefined
	if a, ok := h.Node.Attrs["type"]; ok && a.GetTp() != nil {
		et = optElemType(a.GetTp())
	}
	if v == nil {
		h.Set(0, &onnx.Value{Kind: onnx.KindOptional, ElemType: et})
		return nil
	}
	switch v.Kind {
	case onnx.KindTensor:
		et = v.Tensor.ElemType()
	case onnx.KindSequence:
		if v.ElemType != onnx.Undefined {
			et = v.ElemType
		}
	default:
		return h.Errorf("an optional cannot hold an optional")
	}
	h.Set(0, &onnx.Value{Kind: onnx.KindOptional, Elem: v, ElemType: et})
	return nil
}

// optElemType is the innermost tensor element type of a TypeProto.
func optElemType(tp *onnxpb.TypeProto) onnx.ElemType {
	for depth := 0; tp != nil && depth < 8; depth++ {
		switch {
		case tp.GetTensorType() != nil:
			return onnx.ElemType(tp.GetTensorType().GetElemType())
		case tp.GetSequenceType() != nil:
			tp = tp.GetSequenceType().GetElemType()
		case tp.GetOptionalType() != nil:
			tp = tp.GetOptionalType().GetElemType()
		default:
			return onnx.Undefined
		}
	}
	return onnx.Undefined
}

func hostOptionalHasElement(h *HostCtx) error {
	v := optInput(h, 0)
	has := v != nil && (v.Kind != onnx.KindOptional || v.Elem != nil)
	h.Set(0, onnx.TensorValue(optBool(has)))
	return nil
}

func hostOptionalGetElement(h *HostCtx) error {
	v := optInput(h, 0)
	if v == nil {
		return h.Errorf("input is required")
	}
	if v.Kind != onnx.KindOptional {
		h.Set(0, v)
		return nil
	}
	if v.Elem == nil {
		return h.Errorf("the optional is empty")
	}
	h.Set(0, v.Elem)
	return nil
}

func optBool(b bool) *onnx.Tensor {
	l := hlo.NewLiteral(hlo.ArrayShape(hlo.Pred))
	l.SetBool(0, b)
	return onnx.TensorOf(l)
}

// HostIdentity is Identity on concrete values of any kind (tensors,
// sequences, optionals): for the lead to register as Identity's Host.
func HostIdentity(h *HostCtx) error {
	v := optInput(h, 0)
	if v == nil {
		return h.Errorf("input is required")
	}
	h.Set(0, v)
	return nil
}
