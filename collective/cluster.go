package collective

import (
	"bytes"
	"context"
	"fmt"
)

// Cluster is a transport spanning several processes: the devices of all
// of them numbered 0..Devices()-1, of which this process runs
// LocalDevices(). Package distributed provides one joined through a
// launcher (mpirun, Slurm, Kubernetes); a client given one runs its
// programs' local devices and reaches the rest through it.
type Cluster interface {
	Transport
	// Devices is the number of devices across every process.
	Devices() int
	// LocalDevices are the global ids of this process's devices.
	LocalDevices() []int
	// Process is this process's rank; ProcessOf the rank running a device.
	Process() int
	ProcessOf(device int) int
}

// Handshake exchanges payload among devices (self among them) under
// key, returning every device's payload in the order of devices. The
// runtime calls it before a launch, with each device's program
// fingerprint and argument shapes, so that processes that would run
// different programs fail at once, naming the device that differs,
// instead of waiting for messages that never come.
func Handshake(ctx context.Context, t Transport, self int, devices []int, key Key, payload []byte) ([][]byte, error) {
	sizes := make([]byte, 8*len(devices))
	var sends, recvs []Message
	n := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), byte(len(payload) >> 24)}
	for i, d := range devices {
		sends = append(sends, Message{Peer: d, Data: n})
		recvs = append(recvs, Message{Peer: d, Data: sizes[8*i : 8*i+4]})
	}
	if err := t.Exchange(ctx, self, key, sends, recvs); err != nil {
		return nil, err
	}
	out := make([][]byte, len(devices))
	sends, recvs = sends[:0], recvs[:0]
	for i, d := range devices {
		s := sizes[8*i:]
		out[i] = make([]byte, int(s[0])|int(s[1])<<8|int(s[2])<<16|int(s[3])<<24)
		sends = append(sends, Message{Peer: d, Data: payload})
		recvs = append(recvs, Message{Peer: d, Data: out[i]})
	}
	key.Phase++
	if err := t.Exchange(ctx, self, key, sends, recvs); err != nil {
		return nil, err
	}
	return out, nil
}

// SameEverywhere checks a handshake's payloads agree, naming the first
// device whose payload differs from self's.
func SameEverywhere(self int, devices []int, payloads [][]byte, what func([]byte) string) error {
	var mine []byte
	for i, d := range devices {
		if d == self {
			mine = payloads[i]
		}
	}
	for i, d := range devices {
		if !bytes.Equal(payloads[i], mine) {
			return fmt.Errorf("device %d runs %s but device %d runs %s", d, what(payloads[i]), self, what(mine))
		}
	}
	return nil
}
