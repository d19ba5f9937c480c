package distributed

import (
	"strings"
	"testing"
)

func envOf(kv ...string) lookupFunc {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestConfigFromEnv(t *testing.T) {
	// Ports worked by hand from JAX's rule: 61440 + (job / 4096) % 4096
	// for OpenMPI 4's job ids, 61440 + job % 4096 for Slurm's.
	tests := []struct {
		name    string
		env     lookupFunc
		want    Config
		found   bool
		wantErr string
	}{
		{name: "nothing", env: envOf()},
		{name: "openmpi 4", found: true,
			env: envOf("OMPI_MCA_orte_hnp_uri", "1915027456.0;tcp://192.0.2.2:48857;tcp6://[fd00::2]:35939",
				"OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2"),
			want: Config{Coordinator: "192.0.2.2:62032", Processes: 2, Process: 1}},
		{name: "openmpi several addresses", found: true,
			env: envOf("OMPI_MCA_orte_hnp_uri", "1531576320.0;tcp://10.96.0.1,10.148.0.1,10.108.0.1:34911",
				"OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "4"),
			want: Config{Coordinator: "10.96.0.1:62624", Processes: 4}},
		{name: "openmpi ipv6", found: true,
			env: envOf("OMPI_MCA_orte_hnp_uri", "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370",
				"OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4"),
			want: Config{Coordinator: "[fe80::b9b:ac5d:9cf0:b858]:62880", Processes: 4, Process: 3}},
		{name: "openmpi bad uri", found: true, wantErr: "no tcp address",
			env: envOf("OMPI_MCA_orte_hnp_uri", "123.0;ud://x", "OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2")},
		{name: "slurm", found: true,
			env: envOf("SLURM_JOB_ID", "12345", "SLURM_PROCID", "3", "SLURM_NTASKS", "8",
				"SLURM_STEP_NODELIST", "node[01-04,07],gpu3"),
			want: Config{Coordinator: "node01:61497", Processes: 8, Process: 3}},
		{name: "slurm allocation shell", env: envOf("SLURM_JOB_ID", "12345")},
		{name: "slurm no node list", found: true, wantErr: "SLURM_STEP_NODELIST",
			env: envOf("SLURM_JOB_ID", "1", "SLURM_PROCID", "0", "SLURM_NTASKS", "1")},
		{name: "openmpi under slurm", found: true,
			env: envOf("SLURM_JOB_ID", "12345", "SLURM_PROCID", "0", "SLURM_NTASKS", "1", "SLURM_STEP_NODELIST", "n1",
				"OMPI_MCA_orte_hnp_uri", "1915027456.0;tcp://192.0.2.2:48857", "OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2"),
			want: Config{Coordinator: "192.0.2.2:62032", Processes: 2, Process: 1}},
		{name: "kubernetes indexed job", found: true,
			env:  envOf("JOB_COMPLETION_INDEX", "2", "AXLE_NUM_PROCESSES", "4", "AXLE_COORDINATOR_ADDRESS", "train-0.train:1234"),
			want: Config{Coordinator: "train-0.train:1234", Processes: 4, Process: 2}},
		{name: "kubernetes without size", found: true, wantErr: "AXLE_NUM_PROCESSES is not set",
			env: envOf("JOB_COMPLETION_INDEX", "2", "AXLE_COORDINATOR_ADDRESS", "train-0.train:1234")},
		{name: "explicit", found: true,
			env:  envOf("AXLE_COORDINATOR_ADDRESS", "h:1", "AXLE_NUM_PROCESSES", "3", "AXLE_PROCESS_ID", "1", "AXLE_LOCAL_DEVICES", "2"),
			want: Config{Coordinator: "h:1", Processes: 3, Process: 1, LocalDevices: 2}},
		{name: "explicit overrides openmpi", found: true,
			env: envOf("OMPI_MCA_orte_hnp_uri", "1915027456.0;tcp://192.0.2.2:48857", "OMPI_COMM_WORLD_RANK", "1",
				"OMPI_COMM_WORLD_SIZE", "2", "AXLE_COORDINATOR_ADDRESS", "10.0.0.1:5000", "AXLE_PROCESS_ID", "0"),
			want: Config{Coordinator: "10.0.0.1:5000", Processes: 2, Process: 0}},
		{name: "rank out of range", found: true, wantErr: "out of range",
			env: envOf("AXLE_COORDINATOR_ADDRESS", "h:1", "AXLE_NUM_PROCESSES", "2", "AXLE_PROCESS_ID", "2")},
		{name: "not a number", found: true, wantErr: `AXLE_NUM_PROCESSES="two"`,
			env: envOf("AXLE_COORDINATOR_ADDRESS", "h:1", "AXLE_NUM_PROCESSES", "two")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := configFrom(tt.env)
			if found != tt.found {
				t.Errorf("found = %v, want %v", found, tt.found)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("config %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOpenMPI5Coordinator(t *testing.T) {
	// PRRTE's ids are names: the port is hashed from one, within the range.
	got, _, err := configFrom(envOf("PMIX_SERVER_URI41", "prterun-vm-7899@0.0;tcp4://127.0.0.1:48197",
		"OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2"))
	if err != nil {
		t.Fatal(err)
	}
	host, port, ok := strings.Cut(got.Coordinator, ":")
	if !ok || host != "127.0.0.1" || port < "61440" || len(port) != 5 {
		t.Errorf("coordinator %q, want 127.0.0.1 and a port in [61440, 65535]", got.Coordinator)
	}
}

func TestFirstHost(t *testing.T) {
	for list, want := range map[string]string{
		"node001":               "node001",
		"node001,host2":         "node001",
		"node[001-0015],host2":  "node001",
		"node[007,009-015]":     "node007",
		"rack[2-3]-n[5,9],x[1]": "rack2-n5",
	} {
		if got, err := firstHost(list); err != nil || got != want {
			t.Errorf("firstHost(%q) = %q, %v; want %q", list, got, err, want)
		}
	}
	for _, bad := range []string{"", "node[01-02", "node[]"} {
		if _, err := firstHost(bad); err == nil {
			t.Errorf("firstHost(%q) succeeded", bad)
		}
	}
}
