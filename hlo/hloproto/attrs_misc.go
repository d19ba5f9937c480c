package hloproto

import (
	"strconv"
	"strings"

	"github.com/axle-ml/axle/hlo"
)

// The newer attributes with fields of their own: scan's is_associative,
// convolution's conv_kind, result_accuracy, domain and statistics.
func init() {
	codecs["is_associative"] = codec{
		enc: func(p *P, _ hlo.Opcode, v any) bool {
			b, ok := v.(bool)
			p.IsAssociative = TriState_TRI_STATE_FALSE
			if b {
				p.IsAssociative = TriState_TRI_STATE_TRUE
			}
			return ok
		},
		dec: func(p *P, _ hlo.Opcode) (any, bool) {
			return p.IsAssociative == TriState_TRI_STATE_TRUE, p.IsAssociative != TriState_TRI_STATE_UNSPECIFIED
		},
	}
	codecs["conv_kind"] = enumCodec(ConvolutionKind_name, ConvolutionKind_value, "CONVOLUTION_KIND_", true,
		func(p *P) int32 { return int32(p.ConvKind) }, func(p *P, v int32) { p.ConvKind = ConvolutionKind(v) })
	codecs["result_accuracy"] = codec{enc: encResultAccuracy, dec: decResultAccuracy}
	codecs["domain"] = codec{enc: encDomain, dec: decDomain}
	codecs["statistics"] = codec{enc: encStatistics, dec: decStatistics}
}

// formatDouble prints a double as the text writes these: integral values
// keep a ".0".
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}

// encResultAccuracy reads {mode=highest} or {tolerance={rtol=R, atol=A, ulps=U}}.
func encResultAccuracy(p *P, _ hlo.Opcode, v any) bool {
	r, ok := v.(hlo.Raw)
	s := string(r)
	if mode, found := strings.CutPrefix(s, "{mode="); ok && found {
		n, known := ResultAccuracy_Mode_value[strings.ToUpper(strings.TrimSuffix(mode, "}"))]
		p.ResultAccuracy = &ResultAccuracy{Specs: &ResultAccuracy_Mode_{Mode: ResultAccuracy_Mode(n)}}
		return known && strings.HasSuffix(mode, "}")
	}
	body, found := strings.CutPrefix(s, "{tolerance=")
	if !ok || !found || !strings.HasSuffix(body, "}") {
		return false
	}
	kvs, parsed := parseKV(strings.TrimSuffix(body, "}"), ',')
	if !parsed {
		return false
	}
	tol := &ResultAccuracy_Tolerance{}
	for _, e := range kvs {
		var err error
		switch strings.TrimSpace(e.key) {
		case "rtol":
			tol.Rtol, err = strconv.ParseFloat(e.value, 64)
		case "atol":
			tol.Atol, err = strconv.ParseFloat(e.value, 64)
		case "ulps":
			tol.Ulps, err = strconv.ParseInt(e.value, 10, 64)
		default:
			return false
		}
		if err != nil {
			return false
		}
	}
	p.ResultAccuracy = &ResultAccuracy{Specs: &ResultAccuracy_Tolerance_{Tolerance: tol}}
	return true
}

func decResultAccuracy(p *P, _ hlo.Opcode) (any, bool) {
	switch s := p.GetResultAccuracy().GetSpecs().(type) {
	case *ResultAccuracy_Mode_:
		return hlo.Raw("{mode=" + strings.ToLower(s.Mode.String()) + "}"), true
	case *ResultAccuracy_Tolerance_:
		t := s.Tolerance
		return hlo.Raw("{tolerance={rtol=" + formatDouble(t.GetRtol()) + ", atol=" + formatDouble(t.GetAtol()) +
			", ulps=" + strconv.FormatInt(t.GetUlps(), 10) + "}}"), true
	}
	return hlo.Raw("{}"), false
}

// encDomain reads {kind="sharding", entry=S, exit=S}, the shardings' domain.
func encDomain(p *P, _ hlo.Opcode, v any) bool {
	r, ok := v.(hlo.Raw)
	s, found := strings.CutPrefix(string(r), `{kind="sharding", entry=`)
	if !ok || !found || !strings.HasSuffix(s, "}") {
		return false
	}
	s = strings.TrimSuffix(s, "}")
	end := bracedEnd(s)
	if end < 0 {
		return false
	}
	exit, found := strings.CutPrefix(s[end:], ", exit=")
	if !found {
		return false
	}
	var okEntry, okExit bool
	p.DomainEntrySharding, okEntry = domainSharding(s[:end])
	p.DomainExitSharding, okExit = domainSharding(exit)
	return okEntry && okExit
}

// domainSharding is nil for `{}`, no sharding.
func domainSharding(s string) (*OpSharding, bool) {
	if s == "{}" {
		return nil, true
	}
	return parseSharding(s)
}

func decDomain(p *P, _ hlo.Opcode) (any, bool) {
	text := func(s *OpSharding) (string, bool) {
		if s == nil {
			return "{}", true
		}
		return formatSharding(s, true)
	}
	entry, ok1 := text(p.DomainEntrySharding)
	exit, ok2 := text(p.DomainExitSharding)
	present := ok1 && ok2 && (p.DomainEntrySharding != nil || p.DomainExitSharding != nil)
	return hlo.Raw(`{kind="sharding", entry=` + entry + ", exit=" + exit + "}"), present
}

// encStatistics reads {visualizing_index=I,name=value,...}.
func encStatistics(p *P, _ hlo.Opcode, v any) bool {
	r, ok := v.(hlo.Raw)
	kvs, parsed := parseKV(string(r), ',')
	if !ok || !parsed || len(kvs) == 0 || kvs[0].key != "visualizing_index" {
		return false
	}
	idx, err := strconv.ParseInt(kvs[0].value, 10, 64)
	if err != nil {
		return false
	}
	st := &StatisticsViz{StatIndexToVisualize: idx}
	for _, e := range kvs[1:] {
		f, err := strconv.ParseFloat(e.value, 64)
		if err != nil || e.quoted {
			return false
		}
		st.Statistics = append(st.Statistics, &Statistic{StatName: e.key, StatVal: f})
	}
	p.StatisticsViz = st
	return true
}

func decStatistics(p *P, _ hlo.Opcode) (any, bool) {
	st := p.StatisticsViz
	if st == nil {
		return hlo.Raw("{}"), false
	}
	parts := []string{"visualizing_index=" + strconv.FormatInt(st.StatIndexToVisualize, 10)}
	for _, s := range st.Statistics {
		parts = append(parts, s.StatName+"="+strconv.FormatFloat(s.StatVal, 'g', -1, 64))
	}
	return hlo.Raw("{" + strings.Join(parts, ",") + "}"), true
}
