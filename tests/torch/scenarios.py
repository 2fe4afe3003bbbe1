"""What each spawned rank runs: the collective checks on the world and on subgroups, async futures,
bounded waits, a DDP training run against gloo, the rank that leaves mid-training, and the survivors of a
killed rank that shrink the group and go on."""

import datetime
import os
import signal
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import torch_myriad  # noqa: F401  registers the backend
from checks import Checks, expect_same, inp, reduce_local, SUM
from harness import report


def _init(rank, world, store_path, backend, timeout_s=300):
    # Generous: a rank outside a subgroup runs ahead and waits in the store for the next group's unique
    # id while the members still run their checks, which takes long on a loaded 2-core machine.
    dist.init_process_group(backend, init_method=f"file://{store_path}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s))


def _ddp_train(group, steps, rank):
    torch.manual_seed(0)  # the same initial model on every rank
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    ddp = nn.parallel.DistributedDataParallel(model, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    for _ in range(steps):
        x = torch.randn(16, 8, generator=gen)
        y = torch.randn(16, 4, generator=gen)
        opt.zero_grad()
        nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def _scenarios(c, rank, world, gloo):
    me = rank

    def backend_name():
        assert dist.get_backend() in ("myriad", "cpu:myriad"), dist.get_backend()
        name = dist.group.WORLD._get_backend(torch.device("cpu")).name()
        assert name == "myriad", name

    c.check("backend name", backend_name)

    def futures():
        t = inp(me, 200, (4, 4), torch.float32)
        work = dist.all_reduce(t, async_op=True)
        fut = work.get_future().then(lambda f: f.value()[0] * 2)
        want = reduce_local([inp(r, 200, (4, 4), torch.float32) for r in range(world)], SUM, torch.float32, world)
        expect_same(fut.wait(), want * 2, "then() of all_reduce's future")
        assert work.is_completed() and work.is_success()
        # several in flight at once complete in order
        ts = [inp(me, 210 + k, (64,), torch.float64) for k in range(8)]
        works = [dist.all_reduce(t, async_op=True) for t in ts]
        futs = [w.get_future() for w in works]
        torch.futures.wait_all(futs)
        for k, t in enumerate(ts):
            expect_same(t, reduce_local([inp(r, 210 + k, (64,), torch.float64) for r in range(world)], SUM,
                                        torch.float64, world), f"in-flight all_reduce {k}")

    c.check("async futures", futures)

    def bounded_wait():
        # rank 1 sends only after rank 0's wait(timeout) has fired, so that wait must time out
        g = dist.new_group(backend="myriad")
        t = torch.zeros(8)
        if me == 0:
            work = dist.irecv(t, src=1, group=g)
            start = time.monotonic()
            try:
                try:
                    work.wait(timeout=datetime.timedelta(milliseconds=500))
                    raise AssertionError("wait(500 ms) returned before the matching send")
                except dist.DistBackendError as e:
                    assert "did not complete within 500 ms" in str(e), str(e)
                elapsed = time.monotonic() - start
                assert elapsed < 3.0, f"wait(500 ms) took {elapsed:.1f} s"
            finally:  # a failed assertion must not leave the other ranks at the barrier
                dist.barrier(group=gloo)
                work.wait()
            expect_same(t, torch.arange(8.0), "irecv after its wait timed out")
        else:
            dist.barrier(group=gloo)
            if me == 1:
                dist.send(torch.arange(8.0), dst=0, group=g)
        dist.destroy_process_group(g)

    c.check("wait(timeout)", bounded_wait)

    def ddp():
        mine = _ddp_train(dist.group.WORLD, 5, me)
        ref = _ddp_train(gloo, 5, me)
        for k, (a, b) in enumerate(zip(mine, ref)):
            if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
                raise AssertionError(f"DDP parameter {k} after 5 steps: max |myriad - gloo| = {(a - b).abs().max()}")

    c.check("DDP 5 steps vs gloo", ddp)

    def split():
        # ProcessGroup.split_group reaches Backend::split, i.e. myrCommSplit, collective over the world
        ranks = list(range(world - 1)) if me < world - 1 else [world - 1]
        g = dist.group.WORLD.split_group(ranks, timeout=datetime.timedelta(seconds=60),
                                         group_name=f"myriad-split-{ranks[0]}")
        assert g.size() == len(ranks) and g.rank() == ranks.index(me), (g.size(), g.rank())
        t = inp(me, 300, (5,), torch.float32)
        g.allreduce([t]).wait()
        want = reduce_local([inp(r, 300, (5,), torch.float32) for r in ranks], SUM, torch.float32, len(ranks))
        expect_same(t, want, "all_reduce on a split group")

    if hasattr(dist.ProcessGroup, "split_group"):
        c.check("split_group", split)

    def abort():
        g = dist.new_group(backend="myriad")
        t = torch.ones(4)
        dist.all_reduce(t, group=g)
        g._get_backend(torch.device("cpu")).abort()
        try:
            dist.all_reduce(t, group=g)
            raise AssertionError("all_reduce on an aborted backend returned")
        except RuntimeError as e:
            assert "shut down" in str(e) or "aborted" in str(e), str(e)

    c.check("abort", abort)


def world_main(rank, world, store_path, out_dir, backend):
    failures, count, compared = [], 0, 0
    try:
        _init(rank, world, store_path, backend)
        gloo = dist.new_group(backend="gloo")
        c = Checks(rank, world, dist.group.WORLD, gloo)
        c.reductions()
        c.movement()
        c.noncontiguous()
        _scenarios(c, rank, world, gloo)
        # subgroups: the first world-1 ranks and the last world-1 ranks, myriad against gloo
        basic = [torch.float32, torch.int64, torch.bfloat16]
        for ranks in ([r for r in range(world - 1)], [r for r in range(1, world)]):
            sub = dist.new_group(ranks, backend="myriad")
            subgloo = dist.new_group(ranks, backend="gloo")
            if rank in ranks:
                s = Checks(rank, world, sub, subgloo, ranks=ranks, dtypes=basic)
                s.reductions()
                s.movement()
                c.failures += s.failures
                c.count += s.count
                c.gloo_compared += s.gloo_compared
        # a group of the mixed form "cpu:myriad"
        mixed = dist.new_group(backend="cpu:myriad")
        m = Checks(rank, world, mixed, gloo, dtypes=[torch.float32])
        m.reductions()
        m.movement()
        c.failures += m.failures
        c.count += m.count
        c.gloo_compared += m.gloo_compared
        failures, count, compared = c.failures, c.count, c.gloo_compared
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001
        import traceback
        failures.append(f"rank {rank}: {type(e).__name__}: {e}\n{traceback.format_exc()}")
    report(out_dir, rank, {"failures": failures, "checks": count, "gloo_compared": compared})


def devices_main(rank, world, store_path, out_dir):
    """Which devices "myriad" serves: CPU always, CUDA exactly when the extension was built against a torch
    with CUDA; the device-string forms of init_process_group and new_group on whichever torch this is."""
    c = Checks(rank, world, None, None)
    cuda = torch_myriad._C.cuda

    def registration():
        assert not cuda or torch.version.cuda is not None, "built for CUDA against a torch without it"
        want = ["cpu", "cuda"] if cuda else ["cpu"]
        assert torch_myriad.DEVICES == want, torch_myriad.DEVICES
        assert dist.Backend.backend_capability["myriad"] == want, dist.Backend.backend_capability["myriad"]

    def all_reduce(group, what):
        t = inp(rank, 400, (6,), torch.float32)
        dist.all_reduce(t, group=group)
        expect_same(t, reduce_local([inp(r, 400, (6,), torch.float32) for r in range(world)], SUM, torch.float32,
                                    world), what)

    def backend_of(group, device):
        return group._get_backend(torch.device(device)).name()

    def cpu_form():
        assert dist.get_backend() == "cpu:myriad", dist.get_backend()
        assert backend_of(dist.group.WORLD, "cpu") == "myriad"
        all_reduce(None, 'all_reduce on "cpu:myriad"')

    def plain_form():
        g = dist.new_group(backend="myriad")
        all_reduce(g, 'all_reduce on "myriad"')
        if cuda:  # one backend object serves both device types
            assert backend_of(g, "cuda") == "myriad"
            assert g._get_backend(torch.device("cuda")) is g._get_backend(torch.device("cpu"))
            return
        try:  # without CUDA, "myriad" leaves CUDA tensors to no backend, and torch says so
            backend_of(g, "cuda")
        except RuntimeError:
            return
        raise AssertionError('"myriad" has a backend for cuda, but this torch_myriad was built without CUDA')

    def mixed_form():
        # torch takes the device:backend form as written, with or without CUDA: without it, the myriad
        # backend of the group exists but no CUDA tensor can reach it; CPU tensors go to gloo
        g = dist.new_group(backend="cpu:gloo,cuda:myriad")
        assert backend_of(g, "cpu") == "gloo" and backend_of(g, "cuda") == "myriad"
        all_reduce(g, 'all_reduce (gloo) on "cpu:gloo,cuda:myriad"')

    try:
        dist.init_process_group("cpu:myriad", init_method=f"file://{store_path}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=120))
        c.check("registration", registration)
        c.check('"cpu:myriad"', cpu_form)
        c.check('"myriad"', plain_form)
        c.check('"cpu:gloo,cuda:myriad"', mixed_form)
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001
        c.failures.append(f"rank {rank}: {type(e).__name__}: {e}")
    report(out_dir, rank, {"failures": c.failures, "checks": c.count})


def exit_main(rank, world, store_path, out_dir, victim, timeout_s):
    """DDP training in which `victim` leaves (os._exit) before step 4; the others must raise naming it."""
    _init(rank, world, store_path, "myriad", timeout_s)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    result = {"failures": [], "checks": 1}
    start = None
    try:
        for step in range(50):
            if step == 3:
                if rank == victim:
                    os._exit(0)
                start = time.monotonic()
            x = torch.randn(16, 8)
            opt.zero_grad()
            nn.functional.mse_loss(ddp(x), torch.zeros(16, 4)).backward()
            opt.step()
        result["failures"].append(f"rank {rank}: training went on for 50 steps after rank {victim} left")
    except Exception as e:  # noqa: BLE001  the error we want
        elapsed = time.monotonic() - (start or time.monotonic())
        msg = str(e)
        result["error"] = f"{type(e).__name__}: {msg.splitlines()[0] if msg else ''}"
        result["seconds"] = elapsed
        if f"rank {victim}" not in msg:
            result["failures"].append(f"rank {rank}: the error does not name rank {victim}: {type(e).__name__}: {msg}")
        if elapsed >= timeout_s:
            result["failures"].append(f"rank {rank}: the error came after {elapsed:.1f} s, timeout {timeout_s} s")
    report(out_dir, rank, result)
    os._exit(0)  # the group is broken; leave without a collective teardown


def late_main(rank, world, store_path, out_dir, late, late_s):
    """DDP training in which `late` sleeps `late_s` before step 2 (a checkpoint, a data-loader stall) under the
    default settings: no rank may fail, and DDP must keep the models equal (each rank reports its parameters
    and how long the step after the pause took)."""
    _init(rank, world, store_path, "myriad")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    result = {"failures": [], "checks": 1}
    try:
        for step in range(4):
            if step == 2 and rank == late:
                time.sleep(late_s)
            t0 = time.monotonic()
            x = torch.randn(16, 8, generator=gen)
            opt.zero_grad()
            nn.functional.mse_loss(ddp(x), torch.zeros(16, 4)).backward()
            opt.step()
            if step == 2:
                result["step_s"] = time.monotonic() - t0
        result["params"] = [p.detach().flatten().tolist() for p in model.parameters()]
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001
        result["failures"].append(f"rank {rank}: {type(e).__name__}: {e}")
    report(out_dir, rank, result)


def shrink_main(rank, world, store_path, out_dir, victim):
    """`victim` SIGKILLs itself between all-reduces; the others wait for theirs to fail, then
    dist.shrink_group([victim], SHRINK_ABORT) (Backend::shrink, i.e. myrCommShrink) and check the new
    default group: its size, their ranks in it, an all-reduce and an all-gather of values that depend on the
    original rank. Then that group is shrunk by its last rank with SHRINK_DEFAULT and checked again."""
    from torch.distributed.distributed_c10d import SHRINK_ABORT  # only in newer torch

    os.environ["MYRIAD_TIMEOUT_MS"] = "2000"
    _init(rank, world, store_path, "myriad", 60)
    result = {"failures": [], "checks": 1}
    try:
        t = torch.ones(64)
        failed = None
        for step in range(200):
            if step == 3 and rank == victim:
                os.kill(os.getpid(), signal.SIGKILL)
            try:
                dist.all_reduce(t)
            except Exception as e:  # noqa: BLE001  the failure that shrink recovers from
                failed = e
                break
        if failed is None:
            raise AssertionError(f"all_reduce went on for 200 steps after rank {victim} died")
        survivors = [r for r in range(world) if r != victim]
        g = dist.shrink_group([victim], shrink_flags=SHRINK_ABORT)
        assert g.size() == len(survivors) and g.rank() == survivors.index(rank), (g.size(), g.rank())
        mine = inp(rank, 400, (37,), torch.float32)
        t = mine.clone()
        dist.all_reduce(t, group=g)
        want = reduce_local([inp(r, 400, (37,), torch.float32) for r in survivors], SUM, torch.float32,
                            len(survivors))
        expect_same(t, want, "all_reduce on the shrunk group")
        got = [torch.empty(37) for _ in survivors]
        dist.all_gather(got, mine, group=g)
        for k, r in enumerate(survivors):
            expect_same(got[k], inp(r, 400, (37,), torch.float32), f"all_gather block {k} (rank {r})")
        # Again with SHRINK_DEFAULT (queued behind the works already submitted): the last survivor, alive,
        # is left out and leaves without calling it.
        if rank == survivors[-1]:
            report(out_dir, rank, result)
            os._exit(0)
        rest = survivors[:-1]
        g2 = dist.shrink_group([len(rest)], group=g)
        assert g2.size() == len(rest) and g2.rank() == rest.index(rank), (g2.size(), g2.rank())
        t = inp(rank, 500, (11,), torch.float32)
        dist.all_reduce(t, group=g2)
        want = reduce_local([inp(r, 500, (11,), torch.float32) for r in rest], SUM, torch.float32, len(rest))
        expect_same(t, want, "all_reduce on the group shrunk again")
    except Exception as e:  # noqa: BLE001
        result["failures"].append(f"rank {rank}: {type(e).__name__}: {e}")
    report(out_dir, rank, result)
    os._exit(0)  # the parent group is broken; leave without a collective teardown
