"""The tuner's view of a sweep: what `myriad-info --tune` predicts and chooses for the shapes a sweep
measured, and the medians of those measurements. Shared by sweep-algorithms and fit-tuner."""
import functools
import json
import os
import re
import statistics
import subprocess

ALGORITHMS = {
    "all_reduce": ["allreduce.ring", "allreduce.tree", "allreduce.halving_doubling", "allreduce.hier"],
    "all_gather": ["allgather.ring", "allgather.hier"],
    "reduce_scatter": ["reducescatter.ring", "reducescatter.hier"],
    "alltoall": ["alltoall.pairwise", "alltoall.hier"],
    "broadcast": ["broadcast.ring", "broadcast.tree"],
    "reduce": ["reduce.ring", "reduce.tree"],
}


class TunerError(RuntimeError):
    pass


def hosts_label(np_, hosts):
    """The host sizes of NP ranks as HOSTS hosts, split as the perf binaries and myriad-info split them."""
    sizes = [0] * hosts
    for r in range(np_):
        sizes[r * hosts // np_] += 1
    return "+".join(map(str, sizes))


def tuner_tables(build, coll, np_, hosts, counts, env=None, cores=None):
    """{count: (chosen, {algorithm: predicted us})} for float calls of `counts` elements (myriad-info --tune:
    per rank, or per peer for all-to-all, as the perf binaries' JSON `count`). `cores`: the hosts were
    emulated on one machine of that many cores (the sweeps' case), which the model prices."""
    info = os.path.join(build, "tools", "myriad-info")
    cmd = [info, "--tune", "--coll", coll, "--ranks", str(np_), "--hosts", hosts_label(np_, hosts),
           "--bytes", ",".join(str(4 * c) for c in counts)]
    if cores:
        cmd += ["--cores", str(cores), "--machines", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if out.returncode != 0:
        raise TunerError(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    tables = {}
    for block in re.split(r"^(?=tuner: )", out.stdout, flags=re.M):
        head = re.match(r"tuner: \S+ (\d+) B .*: (\S+) \(", block)
        if not head:
            continue
        costs = {m[0]: float(m[1]) for m in re.findall(r"^\s+(\S+)\s+([\d.]+) us", block, re.M)}
        tables[int(head[1]) // 4] = (head[2], costs)
    if len(tables) != len(set(counts)):
        raise TunerError(f"{' '.join(cmd)} printed {len(tables)} tables for {len(set(counts))} sizes")
    return tables


@functools.lru_cache(maxsize=None)
def same_schedule(build, coll, np_, hosts, count, a, b):
    """Do algorithms `a` and `b` plan the very same steps for every rank of this call (as alltoall.hier and
    alltoall.pairwise do on one host)? Then any difference in their measured times is noise, not a choice."""
    info = os.path.join(build, "tools", "myriad-info")
    plans = []
    for algo in (a, b):
        cmd = [info, "--plan", algo, "--nranks", str(np_), "--hosts", hosts_label(np_, hosts), "--count", str(count),
               "--rank", "all"]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise TunerError(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
        plans.append(canonical_plan(out.stdout))
    return plans[0] == plans[1]


def canonical_plan(text):
    """A `myriad-info --plan --rank all` dump without what costs nothing: the header naming the algorithm
    ("allreduce.hier: 22 steps, scratch 262144 B") and each rank's trailing joins (no step waits on them)."""
    ranks, cur = [], None
    for line in text.splitlines():
        if line.startswith("# rank "):
            cur = [line]
            ranks.append(cur)
        elif cur is not None and not re.match(r"^\S+: \d+ steps", line):
            cur.append(line)
    for steps in ranks:
        while len(steps) > 1 and re.match(r"^\d+ join\b", steps[-1]):
            steps.pop()
    return ranks


def machine_cores(records, override=None):
    """The cores of the machine a sweep's hosts were emulated on (its records' `cores`), or `override`;
    None when the records do not say (sweeps before the field) and none is given."""
    if override:
        return override
    cores = {r.get("cores") for r in records}
    if len(cores) > 1:
        raise TunerError(f"the sweeps were measured on machines of different sizes: {sorted(map(str, cores))} cores")
    return cores.pop() if cores else None


def load_sweeps(paths):
    """The records of sweep-algorithms --json files, pooled: a point measured in several files has the
    rounds of all of them (each file's rounds numbered after the previous file's)."""
    out, base = [], 0
    for path in paths:
        with open(path) as f:
            records = json.load(f)
        for r in records:
            out.append(dict(r, round=base + r["round"]))
        base += 1 + max((r["round"] for r in records), default=-1)
    return out


def medians(records):
    """{(np, hosts, collective, size, count): {algorithm: median us}} of a sweep's records (counts of 0,
    sizes too small to split among the ranks, left out)."""
    runs = {}
    for r in records:
        if r["count"] > 0:
            key = (r["np"], r["hosts"], r["collective"], r["size"], r["count"])
            runs.setdefault(key, {}).setdefault(r["algo"], []).append(r["us"])
    return {k: {al: statistics.median(v) for al, v in algos.items()} for k, algos in runs.items()}


def judge(build, points, env=None, cores=None):
    """[(point, times, best, chosen, ratio, predicted, same)] for `points` (medians()): the tuner's choice at
    each, its measured time over the best measured time, and every candidate's predicted time. `same`: the
    choice plans the very steps of the best (same_schedule): its ratio is 1, whatever the clock said."""
    out = []
    for np_, hosts, coll in sorted({p[:3] for p in points}):
        keys = [p for p in sorted(points) if p[:3] == (np_, hosts, coll)]
        tables = tuner_tables(build, coll, np_, hosts, [p[4] for p in keys], env, cores)
        for p in keys:
            times = {al: t for al, t in points[p].items() if al in ALGORITHMS[coll]}
            best = min(times, key=times.get)
            chosen, predicted = tables[p[4]]
            ratio = times[chosen] / times[best]
            same = ratio > 1 and same_schedule(build, coll, np_, hosts, p[4], chosen, best)
            out.append((p, times, best, chosen, 1.0 if same else ratio, predicted, same))
    return out
