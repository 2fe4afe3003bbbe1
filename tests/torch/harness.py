"""Runs a function on N spawned ranks that share a FileStore, and gathers what each rank reports.

Each rank calls fn(rank, world, store_path, out_dir, *args) in a fresh process (the spawn start method,
as torch.multiprocessing uses); it writes a JSON list of failures to out_dir/rank-R.json. run() waits for
every rank up to a deadline, kills what is left, and returns {rank: (exitcode, failures or None)}.
"""

import faulthandler
import json
import multiprocessing
import os
import tempfile
import time


def _entry(fn, rank, world, store_path, out_dir, deadline_s, args):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    faulthandler.dump_traceback_later(max(1.0, deadline_s - 5))  # where a hung rank is, before it is killed
    fn(rank, world, store_path, out_dir, *args)


def run(fn, world, deadline_s, *args):
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="torch-myriad-") as tmp:
        store_path = os.path.join(tmp, "store")
        procs = [ctx.Process(target=_entry, args=(fn, r, world, store_path, tmp, deadline_s, args)) for r in range(world)]
        for p in procs:
            p.start()
        # Poll every rank, so that one that exits is reaped at once: a zombie still answers kill(pid, 0),
        # and Myriad's liveness check would then wait for the silence timeout (a launcher reaps too).
        end = time.monotonic() + deadline_s
        while time.monotonic() < end and any([p.is_alive() for p in procs]):
            time.sleep(0.05)
        results = {}
        for r, p in enumerate(procs):
            if p.is_alive():
                p.kill()
                p.join()
                results[r] = (None, None)  # still running at the deadline
                continue
            path = os.path.join(tmp, f"rank-{r}.json")
            failures = None
            if os.path.exists(path):
                with open(path) as f:
                    failures = json.load(f)
            results[r] = (p.exitcode, failures)
        return results


def report(out_dir, rank, failures):
    with open(os.path.join(out_dir, f"rank-{rank}.json"), "w") as f:
        json.dump(failures, f)
