package hlotext

import (
	"github.com/axle-ml/axle/hlo"
)

// checkInstruction applies the checks XLA's parser itself makes on one
// instruction (the verifier checks the rest).
func (p *parser) checkInstruction(in *hlo.Instruction, pos int) error {
	switch in.Opcode {
	case hlo.OpInfeed:
		if !in.Shape.IsTuple() || len(in.Shape.Tuple) == 0 {
			return p.errorAt(pos, "infeed must have a non-empty tuple shape")
		}
	case hlo.OpCustomCall:
		return p.checkCustomCall(in, pos)
	case hlo.OpParameter:
		if r, ok := in.Attr("parameter_replication"); ok {
			leaves := 0
			in.Shape.Leaves(func([]int, hlo.Shape) { leaves++ })
			if n := len(r.([]bool)); n != leaves {
				return p.errorAt(pos, "parameter has %d leaf buffers, but parameter_replication has %d elements", leaves, n)
			}
		}
	case hlo.OpConditional:
		return p.checkConditional(in, pos)
	}
	return nil
}

var apiVersions = map[hlo.Enum]bool{
	"API_VERSION_ORIGINAL": true, "API_VERSION_STATUS_RETURNING": true,
	"API_VERSION_STATUS_RETURNING_UNIFIED": true, "API_VERSION_TYPED_FFI": true,
}

func (p *parser) checkCustomCall(in *hlo.Instruction, pos int) error {
	if v, ok := in.EnumAttr("api_version"); ok {
		if v == "API_VERSION_UNSPECIFIED" {
			// Older XLA versions print the proto's zero value for custom
			// calls that never set one; their runtime read it as the
			// original API, so do we.
			p.warnAt(pos, "api_version=API_VERSION_UNSPECIFIED read as the original API (XLA's parser rejects it)")
			in.RemoveAttr("api_version")
			return p.checkCustomCallLayouts(in, pos)
		}
		if !apiVersions[v] {
			return p.errorAt(pos, "Unknown API version: %s", v)
		}
	}
	return p.checkCustomCallLayouts(in, pos)
}

func (p *parser) checkCustomCallLayouts(in *hlo.Instruction, pos int) error {
	if v, ok := in.Attr("operand_layout_constraints"); ok {
		shapes := v.([]hlo.Shape)
		if len(shapes) != len(in.Operands) {
			return p.errorAt(pos, "Expected %d operand layout constraints, %d given", len(in.Operands), len(shapes))
		}
		for i, s := range shapes {
			if !s.Compatible(in.Operands[i].Shape) {
				return p.errorAt(pos, "operand %d is not compatible with operand shape %s", i, s)
			}
		}
	}
	return nil
}

func (p *parser) checkConditional(in *hlo.Instruction, pos int) error {
	if len(in.Operands) == 0 {
		return p.errorAt(pos, "conditional needs a predicate or branch index operand")
	}
	sel := in.Operands[0].Shape
	if !sel.IsArray() || sel.Rank() != 0 {
		return p.errorAt(pos, "The first operand must be a scalar")
	}
	switch sel.DType {
	case hlo.Pred:
		if in.HasAttr("branch_computations") {
			return p.errorAt(pos, "unexpected attribute \"branch_computations\": a conditional on pred takes true_computation and false_computation")
		}
		if !in.HasAttr("true_computation") || !in.HasAttr("false_computation") {
			return p.errorAt(pos, "a conditional on pred needs true_computation and false_computation")
		}
	case hlo.S32:
		if in.HasAttr("true_computation") || in.HasAttr("false_computation") {
			return p.errorAt(pos, "unexpected attribute \"true_computation\": a conditional on s32 takes branch_computations")
		}
		if !in.HasAttr("branch_computations") {
			return p.errorAt(pos, "a conditional on s32 needs branch_computations")
		}
	default:
		return p.errorAt(pos, "The first operand must be a scalar of PRED or S32")
	}
	return nil
}

// checkResultAccuracy validates result_accuracy={mode=highest} or
// {tolerance={rtol=0.5, atol=1.0, ulps=2}}; the value is kept verbatim.
func (p *parser) checkResultAccuracy() error {
	if err := p.expect('{', "at the start of result_accuracy"); err != nil {
		return err
	}
	for !p.accept('}') {
		p.accept(',')
		p.skip()
		namePos := p.pos
		name := p.ident()
		if name == "" {
			return p.errorf("expects attribute name in result_accuracy")
		}
		if err := p.expect('=', "after "+name); err != nil {
			return err
		}
		switch name {
		case "mode":
			p.skip()
			vpos := p.pos
			switch m := p.word(); m {
			case "default", "highest", "DEFAULT", "HIGHEST":
			default:
				return p.errorAt(vpos, "expects ResultAccuracy type but sees: %s", m)
			}
		case "tolerance":
			if err := p.expect('{', "at the start of tolerance"); err != nil {
				return err
			}
			for !p.accept('}') {
				p.accept(',')
				p.skip()
				fpos := p.pos
				switch f := p.ident(); f {
				case "rtol", "atol", "ulps":
				default:
					return p.errorAt(fpos, "invalid attribute name in tolerance: %q", f)
				}
				if err := p.expect('=', "in tolerance"); err != nil {
					return err
				}
				if _, err := p.float(); err != nil {
					return err
				}
			}
		default:
			return p.errorAt(namePos, "invalid attribute name in result_accuracy: %q", name)
		}
	}
	return nil
}
