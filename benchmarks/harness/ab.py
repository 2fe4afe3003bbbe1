"""What benchmarks/ab-compare and benchmarks/small-ab share: the collectives they compare, their perf
binaries, and the NAME=VALUE settings each side of a comparison runs with (--base-env, --new-env), e.g.
LD_LIBRARY_PATH for a side whose binaries were copied away from the build that made them, or
MYRIAD_NET_PATHS=1."""
import os
import sys

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")


def perf_binary(build, coll):
    return os.path.join(build, "benchmarks", f"myriad_{coll}_perf")  # as harness/libraries.py names them


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
