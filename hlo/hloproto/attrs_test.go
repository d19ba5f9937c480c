package hloproto

import (
	"testing"

	"github.com/axle-ml/axle/hlo"
	"google.golang.org/protobuf/proto"
)

// TestShardingFields: HloSharding text to OpSharding, the fields worked out
// by hand from xla_data.proto's comments (maximal: one tile, one device;
// tiled: OTHER with the tile assignment, or its iota form).
func TestShardingFields(t *testing.T) {
	for _, c := range []struct {
		text string
		want *OpSharding
	}{
		{"{replicated}", &OpSharding{Type: OpSharding_REPLICATED}},
		{"{maximal device=3}", &OpSharding{Type: OpSharding_MAXIMAL, TileAssignmentDimensions: []int64{1}, TileAssignmentDevices: []int64{3}}},
		{"{devices=[2,2]0,2,1,3}", &OpSharding{Type: OpSharding_OTHER, TileAssignmentDimensions: []int64{2, 2}, TileAssignmentDevices: []int64{0, 2, 1, 3}}},
		{"{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", &OpSharding{Type: OpSharding_OTHER, TileAssignmentDimensions: []int64{2, 1, 2},
			IotaReshapeDims: []int64{2, 2}, IotaTransposePerm: []int32{1, 0}, ReplicateOnLastTileDim: true}},
		{"{{maximal device=1}, {manual}}", &OpSharding{Type: OpSharding_TUPLE, TupleShardings: []*OpSharding{
			{Type: OpSharding_MAXIMAL, TileAssignmentDimensions: []int64{1}, TileAssignmentDevices: []int64{1}}, {Type: OpSharding_MANUAL}}}},
	} {
		p := &P{}
		if !codecs["sharding"].enc(p, hlo.OpAdd, hlo.Raw(c.text)) {
			t.Errorf("%s: not mapped", c.text)
			continue
		}
		if !proto.Equal(p.Sharding, c.want) {
			t.Errorf("%s: got %v, want %v", c.text, p.Sharding, c.want)
		}
		if got, _ := codecs["sharding"].dec(p, hlo.OpAdd); got != hlo.Raw(c.text) {
			t.Errorf("%s: prints back as %s", c.text, got)
		}
	}
}

// TestCEscape: absl::CEscape's escapes, checked by hand.
func TestCEscape(t *testing.T) {
	raw := "a\"b\n\x01\\é"
	want := `a\"b\n\001\\\303\251`
	if got := cEscape(raw); got != want {
		t.Errorf("cEscape = %s, want %s", got, want)
	}
	if back, ok := cUnescape(want); !ok || back != raw {
		t.Errorf("cUnescape = %q, %v", back, ok)
	}
	if _, ok := cUnescape(`bad\q`); ok {
		t.Error("cUnescape accepted \\q")
	}
}

// TestFrontendAttributes: a dictionary value stays unquoted, a string is
// quoted, keys print sorted (XLA's FrontendAttributesToString).
func TestFrontendAttributes(t *testing.T) {
	text := hlo.Raw(`{b="x\"y",a={n = 1 : i32, s = "}"}}`)
	p := &P{}
	if !codecs["frontend_attributes"].enc(p, hlo.OpCall, text) {
		t.Fatal("not mapped")
	}
	m := p.FrontendAttributes.Map
	if m["a"] != `{n = 1 : i32, s = "}"}` || m["b"] != `x"y` || len(m) != 2 {
		t.Errorf("map = %q", m)
	}
	got, _ := codecs["frontend_attributes"].dec(p, hlo.OpCall)
	if want := hlo.Raw(`{a={n = 1 : i32, s = "}"},b="x\"y"}`); got != want {
		t.Errorf("prints as %s, want %s", got, want)
	}
}

// TestOutputOperandAliasing: the text form XLA prints, and its fields.
func TestOutputOperandAliasing(t *testing.T) {
	text := hlo.Raw("{{0}: (1, {}), {1,2}: (0, {0})}")
	p := &P{}
	if !codecs["output_to_operand_aliasing"].enc(p, hlo.OpFusion, text) {
		t.Fatal("not mapped")
	}
	want := []*OutputOperandAliasing{{OutputShapeIndex: []int64{0}, OperandIndex: 1, OperandShapeIndex: []int64{}},
		{OutputShapeIndex: []int64{1, 2}, OperandIndex: 0, OperandShapeIndex: []int64{0}}}
	for i := range want {
		if i >= len(p.OutputOperandAliasing) || !proto.Equal(p.OutputOperandAliasing[i], want[i]) {
			t.Fatalf("got %v, want %v", p.OutputOperandAliasing, want)
		}
	}
	if got, _ := codecs["output_to_operand_aliasing"].dec(p, hlo.OpFusion); got != text {
		t.Errorf("prints back as %s", got)
	}
}

// TestModuleAliases: input_output_alias and buffer_donor text to
// HloModuleProto's fields (hand-worked from hlo.proto's comments: the
// output index, the parameter and its index, MAY_ALIAS unless must-alias)
// and back as XLA prints them.
func TestModuleAliases(t *testing.T) {
	text := "{ {0}: (0, {0}, must-alias), {1, 2}: (1, {}) }"
	a, ok := parseIOAlias(text)
	want := &HloInputOutputAliasProto{Entries: []*HloInputOutputAliasProto_AliasEntryProto{
		{OutputShapeIndex: []int64{0}, ParameterNumber: 0, ParameterShapeIndex: []int64{0}, Kind: Kind_MUST_ALIAS},
		{OutputShapeIndex: []int64{1, 2}, ParameterNumber: 1, ParameterShapeIndex: []int64{}, Kind: Kind_MAY_ALIAS}}}
	if !ok || !proto.Equal(a, want) {
		t.Errorf("parseIOAlias = %v, %v; want %v", a, ok, want)
	}
	if got := formatIOAlias(a); got != text {
		t.Errorf("formatIOAlias = %s", got)
	}
	d, ok := parseBufferDonor("{ (0, {0}), (2, {1}) }")
	if !ok || len(d.Entries) != 2 || d.Entries[1].ParameterNumber != 2 || d.Entries[1].ParameterShapeIndex[0] != 1 {
		t.Errorf("parseBufferDonor = %v, %v", d, ok)
	}
	for _, bad := range []string{"{ {0}: (0, {0}, maybe) }", "{ {0}: (0 {0}) }", "{ {0}: (0, {0}) } x"} {
		if _, ok := parseIOAlias(bad); ok {
			t.Errorf("parseIOAlias accepted %q", bad)
		}
	}
}

// TestMiscFields: the newer attributes' fields, worked out by hand from
// hlo.proto and xla_data.proto, and their text printed back.
func TestMiscFields(t *testing.T) {
	for _, c := range []struct {
		name string
		op   hlo.Opcode
		text any
		want *P
	}{
		{"result_accuracy", hlo.OpExp, hlo.Raw("{tolerance={rtol=0.5, atol=1.0, ulps=2}}"),
			&P{ResultAccuracy: &ResultAccuracy{Specs: &ResultAccuracy_Tolerance_{Tolerance: &ResultAccuracy_Tolerance{Rtol: 0.5, Atol: 1, Ulps: 2}}}}},
		{"result_accuracy", hlo.OpExp, hlo.Raw("{mode=highest}"),
			&P{ResultAccuracy: &ResultAccuracy{Specs: &ResultAccuracy_Mode_{Mode: ResultAccuracy_HIGHEST}}}},
		{"statistics", hlo.OpConstant, hlo.Raw("{visualizing_index=1,stat-1=33,stat-2=44}"),
			&P{StatisticsViz: &StatisticsViz{StatIndexToVisualize: 1, Statistics: []*Statistic{{StatName: "stat-1", StatVal: 33}, {StatName: "stat-2", StatVal: 44}}}}},
		{"domain", hlo.OpDomain, hlo.Raw(`{kind="sharding", entry={maximal device=1}, exit={}}`),
			&P{DomainEntrySharding: &OpSharding{Type: OpSharding_MAXIMAL, TileAssignmentDimensions: []int64{1}, TileAssignmentDevices: []int64{1}}}},
		{"conv_kind", hlo.OpConvolution, hlo.Enum("fprop"), &P{ConvKind: ConvolutionKind_CONVOLUTION_KIND_FPROP}},
		{"is_associative", hlo.OpScan, true, &P{IsAssociative: TriState_TRI_STATE_TRUE}},
		{"metadata", hlo.OpAdd, hlo.Raw(`{op_type="a" source_line=1 profile_type={1,2} deduplicated_name="d\"q"}`),
			&P{Metadata: &OpMetadata{OpType: "a", SourceLine: 1, ProfileInfo: &OpMetadata_ProfileInfo{ProfileType: []ProfileType{1, 2}}, DeduplicatedName: `d"q`}}},
	} {
		p := &P{}
		if !codecs[c.name].enc(p, c.op, c.text) {
			t.Errorf("%s=%v: not mapped", c.name, c.text)
			continue
		}
		if !proto.Equal(p, c.want) {
			t.Errorf("%s=%v: got %v, want %v", c.name, c.text, p, c.want)
		}
		if got, present := codecs[c.name].dec(p, c.op); !present || !sameValue(got, c.text) {
			t.Errorf("%s=%v: prints back as %v (present %v)", c.name, c.text, got, present)
		}
	}
}
