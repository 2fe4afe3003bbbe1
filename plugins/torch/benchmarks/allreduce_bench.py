"""torch.distributed all_reduce through myriad and through gloo, side by side, in the same processes.

    python allreduce_bench.py [--ranks 4] [--mib 16] [--iters 15] [--warmup 3]

Each iteration starts after a gloo barrier; its time is the slowest rank's. Prints the median (and min, max)
per backend, with algorithm bandwidth (bytes / time) and bus bandwidth (x 2(n-1)/n, as nccl-tests do).
"""

import argparse
import datetime
import multiprocessing
import os
import statistics
import tempfile
import time


def rank_main(rank, world, store, args, queue):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    import torch.distributed as dist
    import torch_myriad  # noqa: F401

    dist.init_process_group("myriad", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    gloo = dist.new_group(backend="gloo")
    n = args.mib * (1 << 20) // 4
    t = torch.ones(n, dtype=torch.float32)
    out = {}
    for name, group in (("myriad", dist.group.WORLD), ("gloo", gloo)):
        times = []
        for i in range(args.warmup + args.iters):
            dist.barrier(group=gloo)
            start = time.perf_counter()
            dist.all_reduce(t, group=group)
            elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=gloo)
            if i >= args.warmup:
                times.append(elapsed.item())
        out[name] = times
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--mib", type=int, default=16)
    p.add_argument("--iters", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        procs = [ctx.Process(target=rank_main, args=(r, args.ranks, os.path.join(tmp, "store"), args, queue))
                 for r in range(args.ranks)]
        for pr in procs:
            pr.start()
        result = queue.get(timeout=600)
        for pr in procs:
            pr.join()
    nbytes = args.mib * (1 << 20)
    bus = 2 * (args.ranks - 1) / args.ranks
    print(f"all_reduce float32 {args.mib} MiB, {args.ranks} processes, median of {args.iters} after {args.warmup} "
          f"warm-up")
    print(f"{'backend':8} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'algbw GB/s':>11} {'busbw GB/s':>11}")
    for name, times in result.items():
        med = statistics.median(times)
        print(f"{name:8} {med * 1e3:10.2f} {min(times) * 1e3:8.2f} {max(times) * 1e3:8.2f} {nbytes / med / 1e9:11.2f} "
              f"{nbytes / med / 1e9 * bus:11.2f}")


if __name__ == "__main__":
    main()
