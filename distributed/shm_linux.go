//go:build linux

package distributed

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// A segment is a file in /dev/shm mapped into this process: the
// sender's ring through which same-host messages travel.
type segment struct {
	path string
	data []byte
}

const shmSupported = true

func createSegment(name string, size int) (*segment, error) {
	path := "/dev/shm/" + name
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("distributed: creating %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Unlink(path)
		return nil, fmt.Errorf("distributed: sizing %s: %w", path, err)
	}
	return mapSegment(fd, path, size, unix.PROT_READ|unix.PROT_WRITE)
}

// openSegment maps a peer's segment, read only.
func openSegment(name string, size int) (*segment, error) {
	path := "/dev/shm/" + name
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("distributed: opening %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size != int64(size) {
		return nil, fmt.Errorf("distributed: %s is not a %d-byte segment", path, size)
	}
	return mapSegment(fd, path, size, unix.PROT_READ)
}

func mapSegment(fd int, path string, size, prot int) (*segment, error) {
	data, err := unix.Mmap(fd, 0, size, prot, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("distributed: mapping %s: %w", path, err)
	}
	return &segment{path: path, data: data}, nil
}

// unlink removes the name; the mappings stay until unmapped.
func (s *segment) unlink() { unix.Unlink(s.path) }

func (s *segment) close() { unix.Munmap(s.data) }
