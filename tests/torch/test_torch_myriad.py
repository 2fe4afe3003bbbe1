"""pytest entry of the torch tier: one spawn of N ranks per world size runs every check inside
(scenarios.world_main); one checks the device types the backend serves (scenarios.devices_main); another
has a rank leave mid-training; one shrinks the group after a rank is killed. Run from this folder's parent or
with this folder on sys.path; MYRIAD_TORCH_WORLD=2,3 limits the world sizes."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import scenarios  # noqa: E402

WORLDS = [int(w) for w in os.environ.get("MYRIAD_TORCH_WORLD", "2,3,4").split(",")]


def _collect(results, world):
    problems, checks, compared = [], [], []
    for rank in range(world):
        code, rep = results[rank]
        if code is None:
            problems.append(f"rank {rank} still running at the deadline")
            continue
        if rep is None:
            problems.append(f"rank {rank} exited with {code} without a report")
            continue
        problems += rep["failures"]
        checks.append(rep.get("checks", 0))
        compared.append(rep.get("gloo_compared", 0))
    return problems, checks, compared


@pytest.mark.parametrize("world", WORLDS)
def test_world(world):
    # world 3 uses the mixed form "cpu:myriad" for the default group
    backend = "cpu:myriad" if world == 3 else "myriad"
    results = harness.run(scenarios.world_main, world, 540, backend)
    problems, checks, compared = _collect(results, world)
    print(f"world {world}: {checks} checks per rank, {compared} of them also compared with gloo")
    assert not problems, "\n".join(problems[:30]) + (f"\n... {len(problems) - 30} more" if len(problems) > 30 else "")


def test_devices():
    results = harness.run(scenarios.devices_main, 2, 240)
    problems, checks, _ = _collect(results, 2)
    print(f"devices: {checks} checks per rank")
    assert not problems, "\n".join(problems)


def test_rank_exit():
    world, victim, timeout_s = 3, 2, 30
    results = harness.run(scenarios.exit_main, world, timeout_s + 60, victim, timeout_s)
    problems = []
    for rank in range(world):
        if rank == victim:
            continue
        code, rep = results[rank]
        if rep is None:
            problems.append(f"rank {rank}: no report (exit code {code}): hung or crashed instead of raising")
            continue
        problems += rep["failures"]
        print(f"rank {rank}: raised after {rep.get('seconds', -1):.2f} s: {rep.get('error')}")
    assert not problems, "\n".join(problems)


def test_late_rank():
    """Late is not dead: a DDP step with one rank 20 s late completes on every rank, with equal models."""
    world, late, late_s = 3, 1, 20
    results = harness.run(scenarios.late_main, world, late_s + 240, late, late_s)
    problems, params = [], {}
    for rank in range(world):
        code, rep = results[rank]
        if rep is None:
            problems.append(f"rank {rank}: no report (exit code {code})")
            continue
        problems += rep["failures"]
        if "params" in rep:
            params[rank] = rep["params"]
        if rank != late and rep.get("step_s", 0) < late_s - 5:
            problems.append(f"rank {rank}: the step after the pause took {rep.get('step_s')} s: it did not wait")
        print(f"rank {rank}: the step after rank {late}'s pause took {rep.get('step_s', -1):.1f} s")
    for rank, p in params.items():
        if p != params.get(0, p):
            problems.append(f"rank {rank}'s model differs from rank 0's after training")
    assert not problems, "\n".join(problems)


def test_shrink_after_kill():
    import torch.distributed as dist

    if not hasattr(dist, "shrink_group"):
        pytest.skip("this torch has no torch.distributed.shrink_group")
    world, victim = 4, 2
    results = harness.run(scenarios.shrink_main, world, 120, victim)
    problems = []
    for rank in range(world):
        if rank == victim:
            continue
        code, rep = results[rank]
        if rep is None:
            problems.append(f"rank {rank}: no report (exit code {code}): hung or crashed")
            continue
        problems += rep["failures"]
    assert not problems, "\n".join(problems)
