"""How each library runs one collective on one placement, as process lists for runs.run_rows.

Placements: "shm", all ranks on this host (Myriad over shared memory, Open MPI's vader, Gloo's TCP over
loopback: Gloo has no shared-memory transport); "tcp", the ranks split evenly over the two namespaces of a
netns.VethPair, so every library crosses the veth link. Open MPI runs at its best setting: glibc keeps freed
memory (otherwise it is page-fault bound), and no core binding (two "hosts" on two cores). Every library makes
blocking calls (Myriad with -z 1, the NULL stream, as MPI_Allreduce and Gloo's run() are), so no library
pays for a hand-off to another thread that the others do not."""
import os
import stat
import tempfile

from harness import netns

LIBRARIES = ["myriad", "mpi", "gloo"]
TITLES = {"myriad": "Myriad", "mpi": "Open MPI", "gloo": "Gloo"}
# Each collective's call in each peer's harness; a missing entry is a call that peer lacks.
PEER_CALLS = {
    "all_reduce": {"mpi": "allreduce", "gloo": "allreduce_ring"},
    "all_gather": {"mpi": "allgather", "gloo": "allgather"},
    "reduce_scatter": {"mpi": "reducescatter"},
    "alltoall": {"mpi": "alltoall", "gloo": "alltoall"},
    "broadcast": {"mpi": "broadcast", "gloo": "broadcast"},
}
MPI_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "4294967296"}
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


def supports(library, collective):
    return library == "myriad" or library in PEER_CALLS[collective]


class Launcher:
    """Builds the processes of one run: launcher.procs(library, collective, nranks, sweep_args)."""

    def __init__(self, build, placement, pair=None):
        self.build, self.placement, self.pair = build, placement, pair
        self._port = 29500
        self._tmp = tempfile.TemporaryDirectory(prefix="myriad-compare-")
        self._rsh = self._write_rsh_agent() if pair else None

    def close(self):
        self._tmp.cleanup()

    def _bin(self, name):
        return os.path.join(self.build, "benchmarks", name)

    def _host_of(self, rank, nranks):
        return rank * 2 // nranks  # ranks 0..n/2-1 on host 0, the rest on host 1

    def procs(self, library, collective, nranks, sweep):
        call = PEER_CALLS[collective].get(library)
        if self.placement == "shm":
            if library == "myriad":
                return [([self._bin(f"myriad_{collective}_perf"), "-np", str(nranks), "-z", "1"] + sweep, {})]
            if library == "mpi":
                forward = [a for k in MPI_ENV for a in ("-x", k)]
                return [(MPIRUN + forward + ["-np", str(nranks), self._bin("peers/mpi_coll_perf"), "-c", call] +
                         sweep, MPI_ENV)]
            return [([self._bin("peers/gloo_coll_perf"), "-np", str(nranks), "-c", call] + sweep, {})]
        return getattr(self, f"_tcp_{library}")(collective, call, nranks, sweep)

    def _tcp_myriad(self, collective, call, nranks, sweep):
        self._port += 1  # a fresh rendezvous port per run: the previous one may linger in TIME_WAIT
        procs = []
        for r in range(nranks):
            h = self._host_of(r, nranks)
            env = {"RANK": str(r), "WORLD_SIZE": str(nranks), "LOCAL_RANK": str(r - h * (nranks // 2)),
                   "MASTER_ADDR": self.pair.addr[0], "MASTER_PORT": str(self._port),
                   "MYRIAD_HOST_ID": self.pair.ns[h], "MYRIAD_SOCKET_IFNAME": self.pair.ifname[h]}
            procs.append((self.pair.exec(h, [self._bin(f"myriad_{collective}_perf"), "-z", "1"] + sweep), env))
        return procs

    def _tcp_gloo(self, collective, call, nranks, sweep):
        store = tempfile.mkdtemp(dir=self._tmp.name)
        return [(self.pair.exec(self._host_of(r, nranks),
                                [self._bin("peers/gloo_coll_perf"), "--rank", str(r), "--size", str(nranks),
                                 "--store", store, "--iface", self.pair.addr[self._host_of(r, nranks)], "-c", call] +
                                sweep), {}) for r in range(nranks)]

    def _tcp_mpi(self, collective, call, nranks, sweep):
        # mpirun runs in host 0's namespace and starts host 1's daemon through an "rsh agent" that enters
        # host 1's namespace, so daemons and ranks reach each other over the veth link only.
        per_host = nranks // 2
        hosts = ",".join(f"{a}:{per_host}" for a in self.pair.addr)
        forward = [a for k in MPI_ENV for a in ("-x", k)]
        argv = MPIRUN + ["--host", hosts, "-np", str(nranks), "--mca", "plm_rsh_agent", self._rsh,
                         "--mca", "btl", "tcp,vader,self", "--mca", "btl_tcp_if_include", netns.SUBNET,
                         "--mca", "oob_tcp_if_include", netns.SUBNET] + forward + \
            [self._bin("peers/mpi_coll_perf"), "-c", call] + sweep
        return [(self.pair.exec(0, argv), MPI_ENV)]

    def _write_rsh_agent(self):
        path = os.path.join(self._tmp.name, "netns-rsh")
        cases = "\n".join(f"  {a}) ns={n} ;;" for a, n in zip(self.pair.addr, self.pair.ns))
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\n# ssh stand-in: runs "$@" in the namespace of host $1\nhost=$1\nshift\n'
                    f'case $host in\n{cases}\n  *) echo "netns-rsh: unknown host $host" >&2; exit 255 ;;\nesac\n'
                    f'exec ip netns exec "$ns" /bin/sh -c "$*"\n')
        os.chmod(path, stat.S_IRWXU)
        return path
