"""Runs PyTorch's own distributed test suite (torch/testing/_internal/distributed/distributed_test.py, shipped in
the torch wheel) against the "myriad" backend, as torch's test_distributed_spawn.py does for gloo: every test
spawns WORLD_SIZE ranks that init_process_group("myriad") through a file:// store.

  python pytorch_suite.py --world 2 --curated   the curated list (ctest): each must run and pass; a test the
                                                 suite skips counts as a failure, so the list really runs
  python pytorch_suite.py --world 3 [-k PATTERN] the whole suite (or the tests matching PATTERN); prints counts
  [--start fork]                                 ranks forked from the driver instead of spawned (much faster)

"myriad" is declared a plugin, DDP and subgroup backend before the suite is imported (its skip decorators read
DistTestCases at import). The suite's own skips for any backend but gloo and nccl are listed in
plugins/torch/README.md.
"""

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import unittest

# The suite reads these at import, in the parent and in every spawned rank (which re-imports this module).
os.environ.setdefault("BACKEND", "myriad")
os.environ.setdefault("WORLD_SIZE", "2")
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "TEMP_DIR" not in os.environ:  # the first process makes it (the ranks inherit it) and removes it at exit
    os.environ["TEMP_DIR"] = tempfile.mkdtemp(prefix="myriad-pytorch-suite-")
    atexit.register(shutil.rmtree, os.environ["TEMP_DIR"], ignore_errors=True)

import torch  # noqa: E402
import torch_myriad  # noqa: E402,F401  (registers the backend "myriad")
from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

for feature in ("plugin", "ddp", "subgroup"):
    DistTestCases.backend_feature[feature].add("myriad")

from torch.testing._internal.distributed.distributed_test import DistributedTest, TestDistBackend  # noqa: E402

# Tests the suite runs for myriad that cannot pass for any backend registered as a plugin, with the reason.
NOT_FOR_PLUGINS = {
    "test_ddp_logging_data_cpu": "DDP's logger records a plugin backend's name as 'custom' (it knows only its own "
    "backends' names), and the test expects the backend's name",
}

# The curated lists ctest runs, per world size: the suite runs every one of them for myriad (its own skips are
# failures here), and together they cover each collective the suite runs for a plugin, point-to-point (any
# source included), the list-of-lists all-gather, object collectives, groups and DDP. Each test spawns its
# ranks afresh (about 5 s), so the lists are short and differ between the sizes.
CURATED = {
    2: [
        "test_DistributedDataParallelCPU",
        "test_all_gather",
        "test_all_gather_coalesced_simple",
        "test_all_gather_coalesced_with_empty",
        "test_all_reduce_max",
        "test_all_reduce_product",
        "test_all_reduce_sum_async",
        "test_all_reduce_sum_complex",
        "test_barrier",
        "test_broadcast",
        "test_ddp_create_graph",
        "test_gather_checks",
        "test_irecv",
        "test_isend",
        "test_send_recv_any_source",
        "test_send_recv_with_tag",
    ],
    3: [
        "test_DistributedDataParallel_requires_grad",
        "test_all_gather_coalesced_complex",
        "test_all_gather_coalesced_full_group",
        "test_all_gather_complex",
        "test_all_reduce_full_group_sum",
        "test_all_reduce_min",
        "test_broadcast_full_group",
        "test_gather",
        "test_reduce_sum",
        "test_scatter",
        "test_send_recv",
        "test_send_recv_any_source",
    ],
}


class TestMyriadSuite(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        if os.environ.get("MYRIAD_SUITE_START") == "fork":
            # The ranks fork from this process, which has imported torch and the suite once: a test that the
            # suite skips inside its ranks (most, on a machine without a GPU) costs milliseconds, not an import
            # of torch per rank. PyTorch ran this suite both ways (test_distributed_fork/_spawn).
            self._start_processes(torch.multiprocessing.get_context("fork").Process)
        else:
            self._spawn_processes()


for _name, _why in NOT_FOR_PLUGINS.items():
    setattr(TestMyriadSuite, _name, unittest.skip(_why)(lambda self: None))


def suite_tests(pattern, start_at):
    loader = unittest.TestLoader()
    names = [n for n in loader.getTestCaseNames(TestMyriadSuite) if not pattern or pattern in n]
    names = [n for n in names if not start_at or n >= start_at]  # in name order, as the loader lists them
    return unittest.TestSuite(TestMyriadSuite(n) for n in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world", type=int, help="ranks per test (default: WORLD_SIZE, else 2)")
    parser.add_argument("--curated", action="store_true", help="run the world size's curated list; a skip is a failure")
    parser.add_argument("-k", dest="pattern", help="run only the tests whose name contains PATTERN")
    parser.add_argument("--start-at", metavar="NAME", help="skip the tests whose names sort before NAME (resume)")
    parser.add_argument("-v", action="store_true", help="one line per test")
    parser.add_argument("--start", choices=("spawn", "fork"), default="spawn",
                        help="how each test starts its ranks (default spawn, as PyTorch's CI; fork is much faster)")
    args = parser.parse_args()
    os.environ["MYRIAD_SUITE_START"] = args.start
    if args.world and str(args.world) != os.environ["WORLD_SIZE"]:
        os.environ["WORLD_SIZE"] = str(args.world)  # the suite read it at import: import it afresh
        os.execv(sys.executable, [sys.executable] + sys.argv)
    if args.curated:
        tests = unittest.TestSuite(TestMyriadSuite(n) for n in CURATED[int(os.environ["WORLD_SIZE"])])
    else:
        tests = suite_tests(args.pattern, args.start_at)
    result = unittest.TextTestRunner(verbosity=2 if args.v or args.curated else 1).run(tests)
    skipped_curated = [t.id().rsplit(".", 1)[-1] for t, _ in result.skipped] if args.curated else []
    ran = result.testsRun - len(result.skipped)
    print(f"myriad at world {os.environ['WORLD_SIZE']}: {ran - len(result.failures) - len(result.errors)} passed, "
          f"{len(result.failures) + len(result.errors)} failed, {len(result.skipped)} skipped "
          f"({result.testsRun} tests)")
    for name in skipped_curated:
        print(f"FAIL: {name} is in the curated list but the suite skipped it", file=sys.stderr)
    return 0 if result.wasSuccessful() and not skipped_curated else 1


if __name__ == "__main__":
    sys.exit(main())
