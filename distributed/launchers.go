package distributed

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// A launcher recognizes its environment and fills in a Config from it.
type launcher struct {
	name   string
	detect func(env lookupFunc, c *Config) (bool, error)
}

// launchers in the order they are tried: mpirun inside a Slurm
// allocation sets both, and then mpirun's ranks are the ones that count.
var launchers = []launcher{
	{"OpenMPI", detectOMPI},
	{"Slurm", detectSlurm},
	{"Kubernetes", detectK8s},
}

// Launchers know every process but run no service of ours, so the
// coordinator's port is derived from the job id, as JAX does: a port in
// the top 4096 of the ephemeral range, so that jobs sharing a host
// rarely collide.
const (
	portSpan = 1 << 12
	portBase = 65535 - portSpan + 1
)

func portFromJob(id uint64) int { return portBase + int(id%portSpan) }

// ompiURIHost finds the first address of a "tcp://a,b:port" or
// "tcp6://[a,b]:port" (OpenMPI 4's HNP URI) or "tcp4://a:port" (PMIx's
// server URI, which OpenMPI 5 sets instead).
var ompiURIHost = regexp.MustCompile(`tcp4?://([^,:;]+)[,:]|tcp6://\[([^,\]]+)[,\]]`)

// OpenMPI 5 (PRRTE) has no HNP URI; its PMIx server URIs name the local
// daemon, which is mpirun's host only on mpirun's node: past one node,
// set AXLE_COORDINATOR_ADDRESS.
var pmixURIVars = []string{"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"}

func detectOMPI(env lookupFunc, c *Config) (bool, error) {
	uri, ok := env("OMPI_MCA_orte_hnp_uri")
	for _, v := range pmixURIVars {
		if ok {
			break
		}
		uri, ok = env(v)
	}
	if !ok {
		return false, nil
	}
	if _, ranked := env("OMPI_COMM_WORLD_RANK"); !ranked {
		return false, nil
	}
	if err := intVar(env, "OMPI_COMM_WORLD_SIZE", &c.Processes, true); err != nil {
		return true, err
	}
	if err := intVar(env, "OMPI_COMM_WORLD_RANK", &c.Process, true); err != nil {
		return true, err
	}
	addr, err := ompiCoordinator(uri)
	c.Coordinator = addr
	return true, err
}

// ompiCoordinator derives the coordinator from a URI such as
// "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911": the job id before the
// first dot (a multiple of 2^12 in OpenMPI 4, hence the division), the
// first address of the tcp part. OpenMPI 5's ids are names
// ("prterun-host-123@0"), hashed instead.
func ompiCoordinator(uri string) (string, error) {
	m := ompiURIHost.FindStringSubmatch(uri)
	if m == nil {
		return "", fmt.Errorf("no tcp address in URI %q", uri)
	}
	host := m[1] + m[2]
	job, _, _ := strings.Cut(uri, ";")
	job, _, _ = strings.Cut(job, ".")
	id, err := strconv.ParseUint(job, 10, 64)
	if err == nil {
		id /= portSpan
	} else {
		h := fnv.New64a()
		h.Write([]byte(job))
		id = h.Sum64()
	}
	return net.JoinHostPort(host, strconv.Itoa(portFromJob(id))), nil
}

func detectSlurm(env lookupFunc, c *Config) (bool, error) {
	job, ok := env("SLURM_JOB_ID")
	if !ok {
		return false, nil
	}
	if _, ok := env("SLURM_PROCID"); !ok {
		// An allocation's shell (salloc) has a job but is no task of a step.
		return false, nil
	}
	if err := intVar(env, "SLURM_NTASKS", &c.Processes, true); err != nil {
		return true, err
	}
	if err := intVar(env, "SLURM_PROCID", &c.Process, true); err != nil {
		return true, err
	}
	id, err := strconv.ParseUint(job, 10, 64)
	if err != nil {
		return true, fmt.Errorf("SLURM_JOB_ID=%q is not a number", job)
	}
	nodes, ok := env("SLURM_STEP_NODELIST")
	if !ok {
		return true, errors.New("SLURM_STEP_NODELIST is not set")
	}
	host, err := firstHost(nodes)
	if err != nil {
		return true, err
	}
	c.Coordinator = net.JoinHostPort(host, strconv.Itoa(portFromJob(id)))
	return true, nil
}

// firstHost expands the first host of a Slurm node list in its
// compressed form: "node[01-04,07],gpu3" → "node01", and
// "rack[2-3]-n[5,9]" → "rack2-n5" (each bracket at its first value).
func firstHost(list string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(list); i++ {
		switch ch := list[i]; ch {
		case ',':
			return b.String(), nil
		case '[':
			end := strings.IndexByte(list[i:], ']')
			if end < 0 {
				return "", fmt.Errorf("node list %q: unclosed [", list)
			}
			first := list[i+1 : i+end]
			if j := strings.IndexAny(first, ",-"); j >= 0 {
				first = first[:j]
			}
			if first == "" {
				return "", fmt.Errorf("node list %q: empty range", list)
			}
			b.WriteString(first)
			i += end
		default:
			b.WriteByte(ch)
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("node list %q is empty", list)
	}
	return b.String(), nil
}

// detectK8s reads an indexed Job's completion index as the rank. The
// job's size and its coordinator (index 0's stable name through a
// headless service) would need the Kubernetes API, which a process
// cannot assume it may call: the Job's spec passes them as
// AXLE_NUM_PROCESSES and AXLE_COORDINATOR_ADDRESS.
func detectK8s(env lookupFunc, c *Config) (bool, error) {
	if _, ok := env("JOB_COMPLETION_INDEX"); !ok {
		return false, nil
	}
	if err := intVar(env, "JOB_COMPLETION_INDEX", &c.Process, true); err != nil {
		return true, err
	}
	if err := intVar(env, EnvProcesses, &c.Processes, true); err != nil {
		return true, err
	}
	if v, ok := env(EnvCoordinator); !ok || v == "" {
		return true, fmt.Errorf("%s is not set", EnvCoordinator)
	}
	return true, nil
}
