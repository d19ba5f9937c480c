package distributed

import (
	"bytes"
	"testing"
)

// FuzzControlFrame feeds arbitrary bytes to the control protocol's
// reader and decoders, which read what other processes send: they must
// fail cleanly (never panic, never read past a frame) on anything.
func FuzzControlFrame(f *testing.F) {
	info := ProcessInfo{Rank: 1, Host: "h", Pid: 42, Addr: "127.0.0.1:1", Devices: 2}
	e := newFrame(cRegister)
	info.encode(e)
	f.Add(e.done())
	t := newFrame(cRegister).str("token").int(2)
	info.encode(t)
	info.encode(t)
	f.Add(t.done())
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Add([]byte{255, 255, 255, 255, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		kind, d, err := readFrame(bytes.NewReader(b))
		if err != nil {
			return
		}
		_ = kind
		body := append([]byte(nil), d.b...)
		tab := decodeTable(&dec{b: body})
		if tab.err == nil && len(tab.procs) > len(body) {
			t.Fatalf("%d processes decoded from %d bytes", len(tab.procs), len(body))
		}
		d2 := &dec{b: body}
		_ = decodeInfo(d2)
		_, _ = d2.u64(), d2.str()
	})
}
