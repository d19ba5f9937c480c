package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/axle-ml/axle/onnx/onnxpb"
)

// Model is a decoded ONNX model.
type Model struct {
	Path      string         // the file it was read from ("" if from bytes)
	IRVersion int64          // ModelProto.ir_version
	Opsets    map[string]int // domain ("" for ai.onnx) -> version
	Graph     *Graph
	Producer  string
}

// Graph is an ONNX graph: the main graph or a subgraph (If branch, Loop
// or Scan body).
type Graph struct {
	Name         string
	Inputs       []*ValueInfo // fed inputs (initializers listed here are left out)
	Outputs      []*ValueInfo
	Initializers map[string]*Tensor
	// InitOrder lists the initializers' names in file order.
	InitOrder []string
	Nodes     []*Node
	ValueInfo map[string]*ValueInfo // value_info, inputs and outputs by name
	Parent    *Graph                // enclosing graph of a subgraph (nil for the main graph)
}

// Node is one operator application.
type Node struct {
	Name    string
	Op      string // op_type
	Domain  string // "" for ai.onnx ("ai.onnx" is read as "")
	Inputs  []string
	Outputs []string
	Attrs   map[string]*onnxpb.AttributeProto
	// Graphs are the node's subgraph attributes, decoded (If branches,
	// Loop and Scan bodies).
	Graphs map[string]*Graph
	// GraphLists are the node's GRAPHS attributes, decoded.
	GraphLists map[string][]*Graph
	Index      int    // position in its graph's node list
	Graph      *Graph // the graph the node belongs to
}

// ValueInfo is a graph value's declared name and type.
type ValueInfo struct {
	Name string
	Type *Type // nil if the file gives none
}

// Type is an ONNX TypeProto, decoded.
type Type struct {
	Kind Kind
	Elem ElemType // tensor element type (of the innermost tensor for seq/opt)
	// Dims of a tensor: -1 for a dimension the file leaves symbolic or
	// unknown; nil with HasShape false when no shape is given.
	Dims     []int64
	DimNames []string // symbolic names, "" where the dim is concrete or unnamed
	HasShape bool
	Inner    *Type // element type of a sequence or optional
}

// Describe names a node for messages: `node "n1" (Conv)`.
func (n *Node) Describe() string {
	op := n.Op
	if n.Domain != "" {
		op = n.Domain + ":" + op
	}
	if n.Name == "" {
		return fmt.Sprintf("node #%d (%s)", n.Index, op)
	}
	return fmt.Sprintf("node %q (%s)", n.Name, op)
}

// maxModelBytes bounds the model file size read into memory in one piece
// (protobuf's own limit is 2 GiB).
const maxModelBytes = 2 << 30

// Load reads a model file; external data is read relative to its folder.
func Load(path string) (*Model, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxModelBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than protobuf's 2 GiB limit (keep the weights as external data)", path, st.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := decode(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Path = path
	return m, nil
}

// LoadBytes decodes a serialized ModelProto. dir is the folder external
// data is relative to ("" refuses external data).
func LoadBytes(data []byte, dir string) (*Model, error) { return decode(data, dir) }

func decode(data []byte, dir string) (*Model, error) {
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("not an ONNX ModelProto: %w", err)
	}
	if mp.Graph == nil {
		return nil, errors.New("the model has no graph")
	}
	m := &Model{IRVersion: mp.GetIrVersion(), Opsets: map[string]int{}, Producer: mp.GetProducerName()}
	for _, os := range mp.OpsetImport {
		dom := os.GetDomain()
		if dom == "ai.onnx" {
			dom = ""
		}
		m.Opsets[dom] = int(os.GetVersion())
	}
	if _, ok := m.Opsets[""]; !ok && m.IRVersion < 3 {
		m.Opsets[""] = 1
	}
	if len(mp.Functions) > 0 {
		return nil, fmt.Errorf("model-local functions (%s, ...) are not supported", mp.Functions[0].GetName())
	}
	g, err := decodeGraph(mp.Graph, dir, nil, 0)
	if err != nil {
		return nil, err
	}
	m.Graph = g
	return m, nil
}

// maxGraphDepth bounds subgraph nesting.
const maxGraphDepth = 64

func decodeGraph(gp *onnxpb.GraphProto, dir string, parent *Graph, depth int) (*Graph, error) {
	if depth > maxGraphDepth {
		return nil, fmt.Errorf("subgraphs nested more than %d deep", maxGraphDepth)
	}
	g := &Graph{Name: gp.GetName(), Initializers: map[string]*Tensor{}, ValueInfo: map[string]*ValueInfo{}, Parent: parent}
	for _, tp := range gp.Initializer {
		t, err := DecodeTensor(tp, dir)
		if err != nil {
			return nil, fmt.Errorf("graph %q: initializer: %w", g.Name, err)
		}
		if _, dup := g.Initializers[tp.GetName()]; dup {
			return nil, fmt.Errorf("graph %q: initializer %q given twice", g.Name, tp.GetName())
		}
		g.Initializers[tp.GetName()] = t
		g.InitOrder = append(g.InitOrder, tp.GetName())
	}
	if len(gp.SparseInitializer) > 0 {
		return nil, fmt.Errorf("graph %q: sparse initializers are not supported", g.Name)
	}
	for _, vi := range gp.Input {
		v, err := decodeValueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph %q: input: %w", g.Name, err)
		}
		g.ValueInfo[v.Name] = v
		if _, isInit := g.Initializers[v.Name]; !isInit {
			g.Inputs = append(g.Inputs, v)
		}
	}
	for _, vi := range gp.Output {
		v, err := decodeValueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph %q: output: %w", g.Name, err)
		}
		g.ValueInfo[v.Name] = v
		g.Outputs = append(g.Outputs, v)
	}
	for _, vi := range gp.ValueInfo {
		v, err := decodeValueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph %q: value_info: %w", g.Name, err)
		}
		if _, ok := g.ValueInfo[v.Name]; !ok {
			g.ValueInfo[v.Name] = v
		}
	}
	for i, np := range gp.Node {
		n, err := decodeNode(np, i, dir, g, depth)
		if err != nil {
			return nil, fmt.Errorf("graph %q: %w", g.Name, err)
		}
		g.Nodes = append(g.Nodes, n)
	}
	return g, nil
}

func decodeNode(np *onnxpb.NodeProto, i int, dir string, g *Graph, depth int) (*Node, error) {
	n := &Node{Name: np.GetName(), Op: np.GetOpType(), Domain: np.GetDomain(), Inputs: np.Input, Outputs: np.Output,
		Attrs: map[string]*onnxpb.AttributeProto{}, Index: i, Graph: g}
	if n.Domain == "ai.onnx" {
		n.Domain = ""
	}
	if n.Op == "" {
		return nil, fmt.Errorf("%s: no op_type", n.Describe())
	}
	for _, a := range np.Attribute {
		if a.GetRefAttrName() != "" {
			return nil, fmt.Errorf("%s: attribute %q refers to a function attribute outside a function", n.Describe(), a.GetName())
		}
		n.Attrs[a.GetName()] = a
		if a.G != nil {
			sub, err := decodeGraph(a.G, dir, g, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: attribute %s: %w", n.Describe(), a.GetName(), err)
			}
			if n.Graphs == nil {
				n.Graphs = map[string]*Graph{}
			}
			n.Graphs[a.GetName()] = sub
		}
		for _, gp := range a.Graphs {
			sub, err := decodeGraph(gp, dir, g, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: attribute %s: %w", n.Describe(), a.GetName(), err)
			}
			if n.GraphLists == nil {
				n.GraphLists = map[string][]*Graph{}
			}
			n.GraphLists[a.GetName()] = append(n.GraphLists[a.GetName()], sub)
		}
	}
	return n, nil
}

func decodeValueInfo(vi *onnxpb.ValueInfoProto) (*ValueInfo, error) {
	v := &ValueInfo{Name: vi.GetName()}
	if vi.Type != nil {
		t, err := decodeType(vi.Type, 0)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", v.Name, err)
		}
		v.Type = t
	}
	return v, nil
}

func decodeType(tp *onnxpb.TypeProto, depth int) (*Type, error) {
	if depth > maxGraphDepth {
		return nil, errors.New("type nested too deep")
	}
	switch {
	case tp.GetTensorType() != nil:
		tt := tp.GetTensorType()
		t := &Type{Kind: KindTensor, Elem: ElemType(tt.GetElemType())}
		if tt.Shape != nil {
			t.HasShape = true
			for _, d := range tt.Shape.Dim {
				if d.GetDimParam() != "" || d.Value == nil {
					t.Dims = append(t.Dims, -1)
					t.DimNames = append(t.DimNames, d.GetDimParam())
					continue
				}
				t.Dims = append(t.Dims, d.GetDimValue())
				t.DimNames = append(t.DimNames, "")
			}
		}
		return t, nil
	case tp.GetSequenceType() != nil:
		t := &Type{Kind: KindSequence}
		if et := tp.GetSequenceType().GetElemType(); et != nil {
			in, err := decodeType(et, depth+1)
			if err != nil {
				return nil, err
			}
			t.Inner, t.Elem = in, in.Elem
		}
		return t, nil
	case tp.GetOptionalType() != nil:
		t := &Type{Kind: KindOptional}
		if et := tp.GetOptionalType().GetElemType(); et != nil {
			in, err := decodeType(et, depth+1)
			if err != nil {
				return nil, err
			}
			t.Inner, t.Elem = in, in.Elem
		}
		return t, nil
	case tp.GetMapType() != nil:
		return &Type{Kind: KindMap}, nil
	case tp.GetSparseTensorType() != nil:
		return nil, errors.New("sparse tensor types are not supported")
	}
	return &Type{Kind: KindTensor}, nil
}
