package graph

import (
	"fmt"

	"github.com/axle-ml/axle/onnx"
)

// typeInfo is what load-time placement knows of each value's kind and
// element type: the declared types (inputs, outputs, value_info,
// initializers) and what a few ops say of their outputs. It is not ONNX
// shape inference: shapes are known exactly at compile time.
type typeInfo struct {
	kind map[string]onnx.Kind
	elem map[string]onnx.ElemType
}

// sequenceOps produce sequences; optionalOps optionals.
var sequenceOps = map[string]bool{"SequenceConstruct": true, "SequenceEmpty": true, "SequenceInsert": true,
	"SequenceErase": true, "SplitToSequence": true, "SequenceMap": true, "ZipMap": true}

var stringOps = map[string]bool{"StringNormalizer": true, "StringSplit": true, "StringConcat": true, "RegexFullMatch": true}

func inferTypes(g *onnx.Graph, outer *typeInfo) *typeInfo {
	t := &typeInfo{kind: map[string]onnx.Kind{}, elem: map[string]onnx.ElemType{}}
	if outer != nil {
		for k, v := range outer.kind {
			t.kind[k] = v
		}
		for k, v := range outer.elem {
			t.elem[k] = v
		}
	}
	for name, vi := range g.ValueInfo {
		if vi.Type != nil {
			t.kind[name] = vi.Type.Kind
			t.elem[name] = vi.Type.Elem
		}
	}
	for name, init := range g.Initializers {
		t.kind[name] = onnx.KindTensor
		t.elem[name] = init.ElemType()
	}
	for _, n := range g.Nodes {
		for i, out := range n.Outputs {
			if _, known := t.kind[out]; known || out == "" {
				continue
			}
			switch {
			case sequenceOps[n.Op]:
				t.kind[out] = onnx.KindSequence
			case n.Op == "Optional":
				t.kind[out] = onnx.KindOptional
			case n.Op == "Identity":
				if k, ok := t.kind[n.Input(0)]; ok {
					t.kind[out] = k
				}
			case n.Op == "If":
				if b := n.Graphs["then_branch"]; b != nil && i < len(b.Outputs) && b.Outputs[i].Type != nil {
					t.kind[out] = b.Outputs[i].Type.Kind
				}
			case n.Op == "Loop":
				if b := n.Graphs["body"]; b != nil && i+1 < len(b.Outputs) && b.Outputs[i+1].Type != nil {
					t.kind[out] = b.Outputs[i+1].Type.Kind
				}
			}
			if stringOps[n.Op] {
				t.elem[out] = onnx.String
			}
		}
	}
	return t
}

// tensorOnly says why a value cannot live on a compiled device.
func (t *typeInfo) tensorOnly(name string) error {
	if name == "" {
		return nil
	}
	switch t.kind[name] {
	case onnx.KindSequence:
		return fmt.Errorf("value %q is a sequence", name)
	case onnx.KindOptional:
		return fmt.Errorf("value %q is an optional", name)
	case onnx.KindMap:
		return fmt.Errorf("value %q is a map", name)
	}
	if t.elem[name] == onnx.String {
		return fmt.Errorf("value %q holds strings", name)
	}
	return nil
}
