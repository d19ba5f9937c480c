// Package distributed joins several processes, started by a launcher
// (mpirun, Slurm's srun, a Kubernetes indexed Job, or by hand), into one
// collective.Cluster: the devices of all of them numbered globally,
// process p owning devices [p*L, (p+1)*L) for L local devices each.
//
// Join reads a Config (ConfigFromEnv derives one from the launcher's
// environment as jax.distributed.initialize does), meets the other
// processes at a coordination service run by process 0, and connects
// every pair of processes with one TCP connection (a full mesh). Devices
// of one process exchange through a collective.Local; messages between
// processes travel over their pair's connection, or, when both run on
// one Linux host, through a shared-memory ring in /dev/shm with the
// connection carrying only small notices.
//
// The coordination service is one small framed protocol over TCP rather
// than gRPC (which XLA's coordination service uses): it has a handful of
// messages (register, table, heartbeat, set, get, dead), and a gRPC
// stack would bring a large dependency and generated code to every
// program that imports the runtime, for no gain at this size.
//
// Failures are reported, not hidden: a process whose connections drop,
// or whose heartbeats stop for Config.Heartbeat (a stopped or hung
// process), is declared dead by the service, which tells every other
// process; from then on every pending and future Exchange on every
// process fails with a *ProcessError naming it ("distributed: process 2
// (host h, pid 123) ..."). A job whose process died cannot go on: the
// collective it was in can never complete, so the runtime should end
// the launch and Close the Node.
package distributed
