"""The tuner's view of a sweep: what `myriad-info --tune` predicts and chooses for the shapes a sweep
measured, and the medians of those measurements. Shared by sweep-algorithms and fit-tuner."""
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


def tuner_tables(build, coll, np_, hosts, counts, env=None):
    """{count: (chosen, {algorithm: predicted us})} for float calls of `counts` elements (myriad-info --tune:
    per rank, or per peer for all-to-all, as the perf binaries' JSON `count`)."""
    info = os.path.join(build, "tools", "myriad-info")
    cmd = [info, "--tune", "--coll", coll, "--ranks", str(np_), "--hosts", hosts_label(np_, hosts),
           "--bytes", ",".join(str(4 * c) for c in counts)]
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


def judge(build, points, env=None):
    """[(point, times, best, chosen, ratio, predicted)] for `points` (medians()): the tuner's choice at each,
    its measured time over the best measured time, and every candidate's predicted time."""
    out = []
    for np_, hosts, coll in sorted({p[:3] for p in points}):
        keys = [p for p in sorted(points) if p[:3] == (np_, hosts, coll)]
        tables = tuner_tables(build, coll, np_, hosts, [p[4] for p in keys], env)
        for p in keys:
            times = {al: t for al, t in points[p].items() if al in ALGORITHMS[coll]}
            best = min(times, key=times.get)
            chosen, predicted = tables[p[4]]
            out.append((p, times, best, chosen, times[chosen] / times[best], predicted))
    return out
