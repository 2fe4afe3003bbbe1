"""Receives from any source mixed with directed receives, at 3 ranks: ranks 1 and 2 each send rank 0 three
messages whose values name the sender and its sequence number; rank 0 receives some from a named rank and the
others from any source. The reference is what the senders sent: every message arrives exactly once, the
work's source rank is the rank that sent it, and each sender's messages arrive in the order it sent them.
"""

import datetime
import time

import harness

MESSAGES = 3  # per sender
ELEMENTS = 100_000  # 400 kB: more than one transport chunk


def _value(sender, seq):
    return float(100 * sender + seq)


def any_source_main(rank, world, store_path, out_dir):
    import torch
    import torch.distributed as dist

    import torch_myriad  # noqa: F401  registers the backend

    dist.init_process_group("myriad", init_method=f"file://{store_path}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    failures, got = [], []
    if rank == 0:
        # (src or None, blocking?) in receive order: directed receives claim the oldest message of their rank.
        plan = [(2, True), (None, True), (None, False), (1, True), (None, False), (None, True)]
        for src, blocking in plan:
            t = torch.full((ELEMENTS,), -1.0)
            if blocking:
                sender = dist.recv(t, src=src)
            else:
                work = dist.irecv(t, src=src)
                work.wait()
                sender = work._source_rank()
            values = t.unique().tolist()
            if len(values) != 1:
                failures.append(f"a message from rank {sender} holds several values: {values[:4]}")
                continue
            if src is not None and sender != src:
                failures.append(f"a receive from rank {src} reports rank {sender} as the sender")
            if int(values[0]) // 100 != sender:
                failures.append(f"source rank {sender}, but the message ({values[0]}) was sent by rank {int(values[0]) // 100}")
            got.append(int(values[0]))
        expected = sorted(int(_value(s, q)) for s in (1, 2) for q in range(MESSAGES))
        if sorted(got) != expected:
            failures.append(f"received {got}, expected each of {expected} once")
        for s in (1, 2):
            order = [v for v in got if v // 100 == s]
            if order != sorted(order):
                failures.append(f"rank {s}'s messages arrived out of order: {order}")
    else:
        for seq in range(MESSAGES):
            if rank == 2 and seq == 1:
                time.sleep(0.3)  # rank 1's messages are then waiting first
            dist.send(torch.full((ELEMENTS,), _value(rank, seq)), dst=0)
    dist.barrier()
    dist.destroy_process_group()
    harness.report(out_dir, rank, {"failures": failures, "got": got})


def test_any_source():
    world = 3
    results = harness.run(any_source_main, world, 180)
    problems = []
    for rank in range(world):
        code, rep = results[rank]
        if rep is None:
            problems.append(f"rank {rank}: no report (exit code {code})")
            continue
        problems += [f"rank {rank}: {f}" for f in rep["failures"]]
        if rank == 0:
            print(f"rank 0 received, in order: {rep['got']}")
    assert not problems, "\n".join(problems)
