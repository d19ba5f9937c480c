package hloproto

import (
	"slices"
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// The attributes whose XLA fields are messages of their own.
func init() {
	codecs["index_vector_dim"] = codec{
		enc: func(p *P, op hlo.Opcode, v any) bool {
			i, ok := v.(int64)
			if op == hlo.OpScatter {
				scatterDims(p).IndexVectorDim = i
			} else {
				gatherDims(p).IndexVectorDim = i
			}
			return ok
		},
		dec: func(p *P, op hlo.Opcode) (any, bool) {
			if op == hlo.OpScatter {
				return readScatter(p).IndexVectorDim, true
			}
			return readGather(p).IndexVectorDim, true
		},
	}
	codecs["slice_sizes"] = codec{
		enc: func(p *P, op hlo.Opcode, v any) bool {
			if lists, ok := v.([][]int64); ok {
				// collective-permute: XLA flattens the lists into
				// dynamic_slice_sizes (read back by xlaAttrs, which
				// knows the operand ranks).
				for _, l := range lists {
					p.DynamicSliceSizes = append(p.DynamicSliceSizes, l...)
				}
				return true
			}
			l, ok := v.([]int64)
			p.GatherSliceSizes = slices.Clone(l)
			return ok && op == hlo.OpGather
		},
		// Only a gather's slice_sizes live here: collective-permute's list
		// of lists stays Axle's.
		dec: func(p *P, op hlo.Opcode) (any, bool) { return slices.Clone(p.GatherSliceSizes), op == hlo.OpGather },
	}
	codecs["window"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			w, ok := v.(*hlo.Window)
			if ok {
				p.Window = windowToProto(w)
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			return windowFromProto(p.Window), len(p.GetWindow().GetDimensions()) > 0
		},
	}
	codecs["dim_labels"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			c, ok := v.(*hlo.ConvDimNumbers)
			if ok {
				p.ConvolutionDimensionNumbers = convToProto(c)
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			return convFromProto(p.ConvolutionDimensionNumbers), p.ConvolutionDimensionNumbers != nil
		},
	}
	codecs["padding"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			c, ok := v.(hlo.PaddingConfig)
			p.PaddingConfig = paddingToProto(c)
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) { return paddingFromProto(p.PaddingConfig), p.PaddingConfig != nil },
	}
	codecs["slice"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			s, ok := v.([]hlo.SliceDim)
			for _, d := range s {
				p.SliceDimensions = append(p.SliceDimensions, &HloInstructionProto_SliceDimensions{Start: d.Start, Limit: d.Limit, Stride: d.Stride})
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			s := []hlo.SliceDim{}
			for _, d := range p.SliceDimensions {
				s = append(s, hlo.SliceDim{Start: d.Start, Limit: d.Limit, Stride: d.Stride})
			}
			return s, len(s) > 0
		},
	}
	codecs["operand_precision"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			l, ok := v.([]hlo.Enum)
			pc := precision(p)
			for _, e := range l {
				n, known := PrecisionConfig_Precision_value[strings.ToUpper(string(e))]
				ok = ok && known
				pc.OperandPrecision = append(pc.OperandPrecision, PrecisionConfig_Precision(n))
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			l := []hlo.Enum{}
			present := false
			for _, x := range p.GetPrecisionConfig().GetOperandPrecision() {
				l = append(l, hlo.Enum(strings.ToLower(x.String())))
				present = present || x != PrecisionConfig_DEFAULT
			}
			return l, present
		},
	}
	codecs["algorithm"] = codec{
		enc: func(p *P, op hlo.Opcode, v any) bool {
			e, ok := v.(hlo.Enum)
			if op == hlo.OpRngBitGenerator {
				n, known := RandomAlgorithm_value[strings.ToUpper(string(e))]
				p.RngAlgorithm = RandomAlgorithm(n)
				return ok && known
			}
			n, known := PrecisionConfig_Algorithm_value["ALG_"+strings.ToUpper(string(e))]
			precision(p).Algorithm = PrecisionConfig_Algorithm(n)
			return ok && known
		},
		dec: func(p *P, op hlo.Opcode) (any, bool) {
			if op == hlo.OpRngBitGenerator {
				return hlo.Enum(strings.ToLower(p.RngAlgorithm.String())), p.RngAlgorithm != 0
			}
			a := p.GetPrecisionConfig().GetAlgorithm()
			return hlo.Enum(strings.ToLower(strings.TrimPrefix(a.String(), "ALG_"))), a != 0
		},
	}
	codecs["replica_groups"] = codec{enc: encReplicaGroups, dec: decReplicaGroups}
	codecs["source_target_pairs"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			l, ok := v.([][]int64)
			for _, st := range l {
				if len(st) != 2 {
					return false
				}
				p.SourceTargetPairs = append(p.SourceTargetPairs, &SourceTarget{Source: st[0], Target: st[1]})
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			l := [][]int64{}
			for _, st := range p.SourceTargetPairs {
				l = append(l, []int64{st.Source, st.Target})
			}
			return l, len(l) > 0
		},
	}
	codecs["parameter_replication"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			l, ok := v.([]bool)
			p.ParameterReplication = &ParameterReplication{ReplicatedAtLeafBuffers: slices.Clone(l)}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			l := slices.Clone(p.GetParameterReplication().GetReplicatedAtLeafBuffers())
			if l == nil {
				l = []bool{}
			}
			return l, p.ParameterReplication != nil
		},
	}
	codecs["outfeed_shape"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			s, ok := v.(hlo.Shape)
			sp, err := shapeToProto(s)
			p.OutfeedShape = sp
			return ok && err == nil
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			s, err := shapeFromProto(p.OutfeedShape, "outfeed_shape")
			return s, err == nil
		},
	}
	codecs["operand_layout_constraints"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			l, ok := v.([]hlo.Shape)
			for _, s := range l {
				sp, err := shapeToProto(s)
				if err != nil {
					return false
				}
				p.OperandShapesWithLayout = append(p.OperandShapesWithLayout, sp)
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			l := []hlo.Shape{}
			for _, sp := range p.OperandShapesWithLayout {
				s, err := shapeFromProto(sp, "operand_layout_constraints")
				if err != nil {
					return nil, false
				}
				l = append(l, s)
			}
			return l, len(l) > 0
		},
	}
	codecs["literal"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			l, ok := v.(*hlo.Literal)
			if !ok {
				return false
			}
			lp, err := literalToProto(l)
			p.Literal = lp
			return err == nil
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			if p.Literal == nil {
				return nil, false
			}
			l, err := literalFromProto(p.Literal, "literal")
			return l, err == nil
		},
	}
	// backend_config is bytes in the proto; XLA's text writes a JSON
	// object as it is, anything else quoted with C escapes.
	codecs["backend_config"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			r, ok := v.(hlo.Raw)
			text := string(r)
			if ok && strings.HasPrefix(text, `"`) && quotedEnd(text) == len(text) {
				b, ok := cUnescape(text[1 : len(text)-1])
				p.BackendConfig = []byte(b)
				return ok
			}
			p.BackendConfig = []byte(text)
			return ok && strings.HasPrefix(text, "{")
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			b := string(p.BackendConfig)
			if strings.HasPrefix(b, "{") && bracedEnd(b) == len(b) {
				return hlo.Raw(b), true
			}
			return hlo.Raw(`"` + cEscape(b) + `"`), b != ""
		},
	}
	codecs["frontend_attributes"] = codec{enc: encFrontendAttrs, dec: decFrontendAttrs}
	codecs["metadata"] = codec{enc: encMetadata, dec: decMetadata}
}

func windowToProto(w *hlo.Window) *Window {
	p := &Window{Dimensions: []*WindowDimension{}}
	for _, d := range w.Dims {
		p.Dimensions = append(p.Dimensions, &WindowDimension{Size: d.Size, Stride: d.Stride, PaddingLow: d.PadLo,
			PaddingHigh: d.PadHi, BaseDilation: d.LhsDilation, WindowDilation: d.RhsDilation, WindowReversal: d.Reversal})
	}
	return p
}

func windowFromProto(p *Window) *hlo.Window {
	w := &hlo.Window{}
	for _, d := range p.GetDimensions() {
		w.Dims = append(w.Dims, hlo.WindowDim{Size: d.Size, Stride: d.Stride, PadLo: d.PaddingLow, PadHi: d.PaddingHigh,
			LhsDilation: d.BaseDilation, RhsDilation: d.WindowDilation, Reversal: d.WindowReversal})
	}
	return w
}

func convToProto(c *hlo.ConvDimNumbers) *ConvolutionDimensionNumbers {
	return &ConvolutionDimensionNumbers{
		InputBatchDimension: c.InputBatch, InputFeatureDimension: c.InputFeature, InputSpatialDimensions: slices.Clone(c.InputSpatial),
		KernelInputFeatureDimension: c.KernelInput, KernelOutputFeatureDimension: c.KernelOutput, KernelSpatialDimensions: slices.Clone(c.KernelSpatial),
		OutputBatchDimension: c.OutputBatch, OutputFeatureDimension: c.OutputFeature, OutputSpatialDimensions: slices.Clone(c.OutputSpatial),
	}
}

func convFromProto(p *ConvolutionDimensionNumbers) *hlo.ConvDimNumbers {
	return &hlo.ConvDimNumbers{
		InputBatch: p.GetInputBatchDimension(), InputFeature: p.GetInputFeatureDimension(), InputSpatial: slices.Clone(p.GetInputSpatialDimensions()),
		KernelInput: p.GetKernelInputFeatureDimension(), KernelOutput: p.GetKernelOutputFeatureDimension(), KernelSpatial: slices.Clone(p.GetKernelSpatialDimensions()),
		OutputBatch: p.GetOutputBatchDimension(), OutputFeature: p.GetOutputFeatureDimension(), OutputSpatial: slices.Clone(p.GetOutputSpatialDimensions()),
	}
}

func paddingToProto(c hlo.PaddingConfig) *PaddingConfig {
	p := &PaddingConfig{Dimensions: []*PaddingConfig_PaddingConfigDimension{}}
	for _, d := range c {
		p.Dimensions = append(p.Dimensions, &PaddingConfig_PaddingConfigDimension{EdgePaddingLow: d.Lo, EdgePaddingHigh: d.Hi, InteriorPadding: d.Interior})
	}
	return p
}

func paddingFromProto(p *PaddingConfig) hlo.PaddingConfig {
	c := hlo.PaddingConfig{}
	for _, d := range p.GetDimensions() {
		c = append(c, hlo.PadDim{Lo: d.EdgePaddingLow, Hi: d.EdgePaddingHigh, Interior: d.InteriorPadding})
	}
	return c
}

// encReplicaGroups writes explicit groups as XLA's replica_groups and the
// iota form `[G,N]<=[dims]T(perm)` as its IotaReplicaGroupListProto.
func encReplicaGroups(p *P, _ hlo.Opcode, v any) bool {
	switch g := v.(type) {
	case [][]int64:
		for _, ids := range g {
			p.ReplicaGroups = append(p.ReplicaGroups, &ReplicaGroup{ReplicaIds: slices.Clone(ids)})
		}
		return true
	case hlo.IotaReplicaGroups:
		iota, ok := parseIotaGroups(string(g))
		if ok {
			p.ReplicaGroupList = &HloInstructionProto_IotaCollectiveDeviceList{IotaCollectiveDeviceList: iota}
		}
		return ok
	}
	return false
}

func decReplicaGroups(p *P, _ hlo.Opcode) (any, bool) {
	if iota := p.GetIotaCollectiveDeviceList(); iota != nil {
		return hlo.IotaReplicaGroups(formatIotaGroups(iota)), true
	}
	groups := [][]int64{}
	for _, g := range p.ReplicaGroups {
		groups = append(groups, slices.Clone(g.ReplicaIds))
	}
	return groups, true
}

func parseIotaGroups(s string) (*IotaReplicaGroupListProto, bool) {
	head, rest, ok := strings.Cut(s, "<=")
	if !ok {
		return nil, false
	}
	gn, ok := bracketInts(head)
	if !ok || len(gn) != 2 {
		return nil, false
	}
	dimsText, perm, _ := strings.Cut(rest, "T")
	dims, ok := bracketInts(dimsText)
	if !ok {
		return nil, false
	}
	p := &IotaReplicaGroupListProto{NumReplicaGroups: gn[0], NumDevicesPerGroup: gn[1], IotaReshapeDims: dims}
	if perm != "" {
		if len(perm) < 2 || perm[0] != '(' || perm[len(perm)-1] != ')' {
			return nil, false
		}
		ps, ok := bracketInts("[" + perm[1:len(perm)-1] + "]")
		if !ok {
			return nil, false
		}
		for _, x := range ps {
			p.IotaTransposePerm = append(p.IotaTransposePerm, int32(x))
		}
	}
	return p, true
}

func bracketInts(s string) ([]int64, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	var out []int64
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

func formatIotaGroups(p *IotaReplicaGroupListProto) string {
	ints := func(l []int64) string {
		s := make([]string, len(l))
		for i, x := range l {
			s[i] = strconv.FormatInt(x, 10)
		}
		return strings.Join(s, ",")
	}
	out := "[" + ints([]int64{p.NumReplicaGroups, p.NumDevicesPerGroup}) + "]<=[" + ints(p.IotaReshapeDims) + "]"
	if len(p.IotaTransposePerm) > 0 {
		perm := make([]int64, len(p.IotaTransposePerm))
		for i, x := range p.IotaTransposePerm {
			perm[i] = int64(x)
		}
		out += "T(" + ints(perm) + ")"
	}
	return out
}
