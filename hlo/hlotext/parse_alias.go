package hlotext

// Module header attributes that Axle keeps verbatim but whose syntax XLA
// checks: input_output_alias and buffer_donor.

// shapeIndex parses {0, 1}.
func (p *parser) shapeIndex() error {
	if !p.accept('{') {
		return p.errorf("Expects '{' at the start of ShapeIndex")
	}
	if p.accept('}') {
		return nil
	}
	for {
		if _, err := p.integer(); err != nil {
			return err
		}
		if p.accept('}') {
			return nil
		}
		if !p.accept(',') {
			return p.errorf("Expects '}' at the end of ShapeIndex")
		}
	}
}

// checkInputOutputAlias validates {output_index: (param, param_index[, kind]), ...}.
func (p *parser) checkInputOutputAlias() error {
	if err := p.expect('{', "at the start of input_output_alias"); err != nil {
		return err
	}
	if p.accept('}') {
		return nil
	}
	for {
		if err := p.shapeIndex(); err != nil {
			return err
		}
		if !p.accept(':') {
			return p.errorf("Expects ':' after the output ShapeIndex in aliasing description")
		}
		if err := p.aliasTarget(true); err != nil {
			return err
		}
		if p.accept('}') {
			return nil
		}
		if !p.accept(',') {
			return p.errorf("Expects '}' at the end of aliasing description")
		}
	}
}

// aliasTarget parses (param_number, {index}[, may-alias|must-alias]).
func (p *parser) aliasTarget(kind bool) error {
	if err := p.expect('(', "at the start of an aliased parameter"); err != nil {
		return err
	}
	if _, err := p.integer(); err != nil {
		return err
	}
	if err := p.expect(',', "after the parameter number"); err != nil {
		return err
	}
	if err := p.shapeIndex(); err != nil {
		return err
	}
	if kind && p.accept(',') {
		switch k := p.word(); k {
		case "may-alias", "must-alias":
		default:
			return p.errorf("expects may-alias or must-alias, got %q", k)
		}
	}
	return p.expect(')', "at the end of an aliased parameter")
}

// checkBufferDonor validates {(param, {index}), ...}.
func (p *parser) checkBufferDonor() error {
	if err := p.expect('{', "at the start of buffer_donor"); err != nil {
		return err
	}
	if p.accept('}') {
		return nil
	}
	for {
		if err := p.aliasTarget(false); err != nil {
			return err
		}
		if p.accept('}') {
			return nil
		}
		if err := p.expect(',', "between buffer donors"); err != nil {
			return err
		}
	}
}
