"""What benchmarks/ab-compare and benchmarks/small-ab share: Myriad's perf binaries by collective, and the
NAME=VALUE settings each side of a comparison runs with (--base-env, --new-env), e.g. LD_LIBRARY_PATH for a
side whose binaries were copied away from the build that made them, or MYRIAD_NET_PATHS=1."""
import os
import sys

PERF_BINARIES = {"all_reduce": "myriad_all_reduce_perf", "all_gather": "myriad_all_gather_perf",
                 "reduce_scatter": "myriad_reduce_scatter_perf", "alltoall": "myriad_alltoall_perf"}


def perf_binary(build, coll):
    return os.path.join(build, "benchmarks", PERF_BINARIES[coll])


def add_env_flags(ap):
    for side in ("base", "new"):
        ap.add_argument(f"--{side}-env", action="append", default=[], metavar="NAME=VALUE",
                        help=f"set for the {side} runs (repeatable)")


def side_envs(tool, args):
    """{"base": {...}, "new": {...}} from the parsed --base-env and --new-env; exits on a malformed pair."""
    envs = {}
    for side in ("base", "new"):
        pairs = getattr(args, side + "_env")
        bad = [p for p in pairs if "=" not in p or p.startswith("=")]
        if bad:
            sys.exit(f"{tool}: --{side}-env takes NAME=VALUE, not {bad[0]!r}")
        envs[side] = dict(p.split("=", 1) for p in pairs)
    return envs
