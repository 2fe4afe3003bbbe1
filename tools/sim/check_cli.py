#!/usr/bin/env python3
"""ctest myriad_sim_scenarios: myriad-sim's trace and fabric scenarios from the command line.

- --trace: valid JSON that Perfetto and chrome://tracing read: one named process per rank, one complete event
  per step of every rank (the count --profile reports), none overlapping another on its lane, the last ending
  at the predicted time.
- --elephant on both uplinks of a leaf slows a ring all-reduce that crosses it; --degrade by 4 on a leaf's
  uplinks slows it, by 1 changes nothing; --fail on a cable the ring uses stops its flows for --resume-us,
  on one it does not use changes nothing, on every uplink of a leaf ends in an error that says so;
  malformed scenarios are refused, naming the flag.
- --steady on: a ring cut short and extrapolated gives the full run's time (0.5 %) and messages, the same with
  its runs one at a time (--threads 1) as on every core.
- --bootstrap: the store root's counts and the exchange's messages at 64 ranks.

  check_cli.py MYRIAD_SIM SCRATCH_DIR
"""
import json
import os
import re
import subprocess
import sys

sim, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)


def run(*args, ok=True):
    p = subprocess.run([sim, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        sys.exit(f"myriad-sim {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p


def time_us(p):
    m = re.match(r"time_us ([0-9.]+) busbw_gbs", p.stdout.strip().splitlines()[-1])
    assert m, p.stdout
    return float(m.group(1))


# The trace.
trace = os.path.join(scratch, "trace.json")
p = run("--ranks", "8", "--ranks-per-host", "2", "--hosts-per-leaf", "2", "--bytes", "1M", "--trace", trace,
        "--profile")
steps = int(re.search(r"; (\d+) steps \(", p.stderr).group(1))
events = json.load(open(trace))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {r: f"rank {r}" for r in range(8)}, names
slices = [e for e in events if e["ph"] == "X"]
assert len(slices) == steps, f"{len(slices)} step events, {steps} steps"
lanes = {}
for e in slices:
    assert e["dur"] >= 0 and e["ts"] >= 0, e
    lanes.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
for lane, spans in lanes.items():
    spans.sort()
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end - 0.0015, f"overlapping events on {lane}: one ends at {end}, the next starts at {start}"
last = max(e["ts"] + e["dur"] for e in slices)
assert abs(last - time_us(p)) < 0.01, f"the trace ends at {last} us, the prediction is {time_us(p)}"

# Scenarios: a ring over 4 leaves of 4 hosts, 2 spines; every leaf's traffic to the next crosses a spine.
ring = ["--ranks", "16", "--hosts-per-leaf", "4", "--spines", "2", "--bytes", "16M", "--algo", "allreduce.ring"]
base = time_us(run(*ring))
both = time_us(run(*ring, "--elephant", "0:0:1", "--elephant", "0:1:1"))
assert both > 1.1 * base, f"elephants on both of leaf 0's uplinks: {both} us against {base} without"
slow = time_us(run(*ring, "--degrade", "0:0:4", "--degrade", "0:1:4"))
assert slow > 1.5 * base, f"leaf 0's uplinks at a quarter speed: {slow} us against {base}"
same = time_us(run(*ring, "--degrade", "0:0:1"))
assert same == base, f"a degrade by 1 changed the prediction: {same} against {base}"
# A cable that the ring crosses fails 1 ms in: the flows on it stop for one retransmission timeout (200 ms by
# default), then go on over the other spine; with no timeout the call takes about as long as without.
cut = run(*ring, "--fail", "0:0:1000", "--fail", "0:1:1000", "--fail", "1:0:1000", "--json", ok=False)
assert cut.returncode != 0 and "no live path" in cut.stderr, cut.stderr  # leaf 0 cut off: named, not hung
# A ring's link is idle between its messages, so a failure may cut nothing: a few instants are tried.
for spine in (0, 1):
    for at in (1000, 1013, 1029, 1047):
        p = run(*ring, "--fail", f"0:{spine}:{at}", "--json")
        row = json.loads(p.stdout)
        if row["flows_cut"] == 0:
            assert abs(row["time_us"] - base) < 1e-3, (spine, at, row, base)
            continue
        # A cut flow cannot finish before the failure plus the timeout (200 ms).
        assert row["time_us"] > at + 200000, f"cut flows resumed early: {row['time_us']} us, base {base}"
        fast = json.loads(run(*ring, "--fail", f"0:{spine}:{at}", "--resume-us", "0", "--json").stdout)
        assert base - 1e-3 <= fast["time_us"] < base + 200000, (fast, base)
        failed_spine = spine
        break
assert "failed_spine" in globals(), "no failure cut a flow of the ring: the scenario tests nothing"
for flag, value in [("--elephant", "0:0:0"), ("--elephant", "0:5:1"), ("--elephant", "0:1"),
                    ("--degrade", "0:0:0.5"), ("--degrade", "9:0:2"), ("--degrade", "a:b:c"),
                    ("--fail", "0:2:5"), ("--fail", "0:0:-1"), ("--fail", "0:0")]:
    p = run(*ring, flag, value, ok=False)
    assert p.returncode != 0 and f"{flag} '{value}'" in p.stderr, (flag, value, p.returncode, p.stderr)
p = run("--ranks", "768", "--bytes", "64K", "--algo", "allreduce.ring", "--trace", trace, ok=False)
assert p.returncode != 0 and "--trace: this call has" in p.stderr, p.stderr
# --steady: a 1,024-rank ring cut short and extrapolated gives the full run's time and its link bytes, and
# --profile says that it did and how many steps it ran (fewer than the full plans).
big = ["--ranks", "1024", "--ranks-per-host", "8", "--bytes", "64M", "--algo", "allreduce.ring"]
cut = run(*big, "--steady", "on", "--json", "--profile")
m = re.search(r"steady state: \d+ periodic region\(s\) cut short; \d+ runs of (\d+) steps in all \(the full "
              r"plans: (\d+)\)", cut.stderr)
assert m and int(m.group(1)) < int(m.group(2)), cut.stderr
whole = json.loads(run(*big, "--steady", "off", "--json").stdout)
cut = json.loads(cut.stdout)
assert abs(cut["time_us"] - whole["time_us"]) <= 0.005 * whole["time_us"], (cut, whole)
assert cut["messages"] == whole["messages"], (cut, whole)
assert whole["steady"] is None and cut["steady"]["settled"] is True and cut["steady"]["runs"] >= 4, (cut, whole)
p = run(*big, "--steady", "on", "--steady-tolerance", "0", ok=False)
assert p.returncode != 0 and "--steady-tolerance" in p.stderr, p.stderr
# One run at a time gives what the default (every core) gives; no thread at all is refused by name.
one = json.loads(run(*big, "--steady", "on", "--threads", "1", "--json").stdout)
assert one["time_us"] == cut["time_us"] and one["steady"] == cut["steady"], (one, cut)
p = run(*big, "--threads", "0", ok=False)
assert p.returncode != 0 and "--threads" in p.stderr, p.stderr
# --bootstrap: the store root's counts in closed form (23-byte addresses, 6 rounds at 64 ranks) and an
# exchange over the fabric that takes time; bad constants are refused by name.
boot = json.loads(run("--ranks", "64", "--bootstrap", "--json").stdout)
assert boot["rounds"] == 6 and boot["store_bytes_out"] == 64 * 6 * 23 and boot["store_requests"] == 64 * 3, boot
assert boot["store_wait_keys"] == 64 * 6, boot  # one wait-all per rank, of one address per round
assert boot["held_per_rank"] == 64 * 366 and boot["messages"] == 64 * 6 * 6, boot
assert 0 < boot["exchange_s"] < boot["init_s"] and boot["root_s"] > 0, boot
root = json.loads(run("--ranks", "131072", "--bootstrap", "--bootstrap-root-only", "--json").stdout)
assert root["rounds"] == 17 and root["store_requests"] == 131072 * 3 and not root["exchange_run"], root
assert root["store_wait_keys"] == 131072 * 17 and root["init_s"] == root["root_s"], root
# Polls of the abort notice by ranks kept waiting, at most 10,000 a second: 13.1 s apart at this size.
requests = 131072 * 3 + root["abort_polls"]
assert root["abort_polls"] <= 10000 * root["root_s"], root
assert abs(root["root_s"] - (131072 * 77 + requests * 24 + 131072 * 17 * 0.25) * 1e-6) < 1e-6, root
assert boot["abort_polls"] == 0, boot  # 64 ranks: the root is done long before the first poll
p = run("--ranks", "64", "--bootstrap", "--store-op-us", "-1", ok=False)
assert p.returncode != 0 and "--store-op-us" in p.stderr, p.stderr
print(f"myriad-sim: trace of {steps} steps checked; elephants {both / base:.2f}x, degraded {slow / base:.2f}x; "
      f"a failure of leaf 0's cable to spine {failed_spine} cut flows that resumed one timeout later; steady state "
      f"{cut['time_us']:.1f} us against {whole['time_us']:.1f} in full")
