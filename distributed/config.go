package distributed

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Config says how a process joins the job.
type Config struct {
	// Coordinator is host:port of the coordination service, which
	// process 0 serves (on every interface, at that port).
	Coordinator string
	// Processes is the job's size, Process this process's rank in it.
	Processes, Process int
	// LocalDevices is the number of devices each process runs (the same
	// in every process; 1 when zero).
	LocalDevices int
	// Timeout bounds the rendezvous, connecting the mesh and KV Gets
	// (30 s when zero).
	Timeout time.Duration
	// Heartbeat is how long a process may stay silent before it is
	// declared dead (10 s when zero); heartbeats go out four times per
	// period, so a stopped process is noticed within one period.
	Heartbeat time.Duration
	// Listen is the address this process accepts its peers' data
	// connections on (":0" when empty: every interface, a free port).
	// Peers are told the address this process reaches the coordinator
	// from, unless Listen names a host.
	Listen string
}

const (
	defaultTimeout   = 30 * time.Second
	defaultHeartbeat = 10 * time.Second
)

func (c Config) withDefaults() (Config, error) {
	if c.LocalDevices == 0 {
		c.LocalDevices = 1
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = defaultHeartbeat
	}
	if c.Listen == "" {
		c.Listen = ":0"
	}
	switch {
	case c.Coordinator == "":
		return c, errors.New("distributed: no coordinator address")
	case c.Processes < 1:
		return c, fmt.Errorf("distributed: %d processes", c.Processes)
	case c.Process < 0 || c.Process >= c.Processes:
		return c, fmt.Errorf("distributed: process %d out of range for %d processes", c.Process, c.Processes)
	case c.LocalDevices < 0:
		return c, fmt.Errorf("distributed: %d local devices", c.LocalDevices)
	case c.Timeout < 0 || c.Heartbeat < 0:
		return c, errors.New("distributed: negative timeout")
	}
	return c, nil
}

// Environment variables that configure a process explicitly; they
// override whatever a launcher's environment says.
const (
	EnvCoordinator  = "AXLE_COORDINATOR_ADDRESS"
	EnvProcesses    = "AXLE_NUM_PROCESSES"
	EnvProcess      = "AXLE_PROCESS_ID"
	EnvLocalDevices = "AXLE_LOCAL_DEVICES"
)

// ConfigFromEnv derives a Config from the environment a launcher gave
// this process: OpenMPI's mpirun, Slurm, a Kubernetes indexed Job, or
// the AXLE_* variables, which override the launcher's. The bool reports
// whether the environment describes a job at all (a launcher's or
// AXLE_COORDINATOR_ADDRESS); when false the Config is empty and the
// process should run alone. The error reports an environment that
// describes a job incompletely or inconsistently.
func ConfigFromEnv() (Config, bool, error) {
	return configFrom(os.LookupEnv)
}

type lookupFunc func(string) (string, bool)

func configFrom(env lookupFunc) (Config, bool, error) {
	var c Config
	found := false
	for _, l := range launchers {
		ok, err := l.detect(env, &c)
		if err != nil {
			return Config{}, true, fmt.Errorf("distributed: %s environment: %w", l.name, err)
		}
		if ok {
			found = true
			break
		}
	}
	if v, ok := env(EnvCoordinator); ok && v != "" {
		c.Coordinator, found = v, true
	}
	if !found {
		return Config{}, false, nil
	}
	for _, o := range []struct {
		name string
		dst  *int
	}{{EnvProcesses, &c.Processes}, {EnvProcess, &c.Process}, {EnvLocalDevices, &c.LocalDevices}} {
		if err := intVar(env, o.name, o.dst, false); err != nil {
			return Config{}, true, err
		}
	}
	if _, err := c.withDefaults(); err != nil {
		return Config{}, true, err
	}
	return c, true, nil
}

// intVar sets *dst from the variable name, if set; required makes its
// absence an error.
func intVar(env lookupFunc, name string, dst *int, required bool) error {
	v, ok := env(name)
	if !ok || v == "" {
		if required {
			return fmt.Errorf("distributed: %s is not set", name)
		}
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("distributed: %s=%q is not a count", name, v)
	}
	*dst = n
	return nil
}
