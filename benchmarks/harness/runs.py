"""Runs one benchmark (one or more processes, the first of which prints and writes --json) and returns its
JSON rows. A failed process, a timeout or a wrong result is an error naming the command: a comparison
must never quietly lose a library or a size."""
import json
import os
import subprocess
import tempfile

_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


class RunError(RuntimeError):
    pass


def parse_size(text):
    mult = _SUFFIX.get(text[-1].upper(), 1)
    return int(text[:-1] if mult > 1 else text) * mult


def size_label(n):
    for suffix, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


def sizes_between(lo, hi, factor):
    sizes = [lo]
    while sizes[-1] * factor <= hi:
        sizes.append(sizes[-1] * factor)
    return sizes


def run_rows(procs, timeout=900):
    """procs: [(argv, env-overrides)]. Appends --json FILE to every argv (only the printing rank writes it),
    runs them all at once, and returns the rows, checking each for #wrong when the run checked."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    os.unlink(path)
    running = []
    try:
        for argv, env in procs:
            full = dict(os.environ, **env)
            running.append((argv, subprocess.Popen(argv + ["--json", path], env=full, stdout=subprocess.PIPE,
                                                   stderr=subprocess.STDOUT, text=True)))
        outputs = []
        for argv, p in running:
            try:
                out, _ = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RunError(f"{' '.join(argv)}: no result within {timeout} s")
            outputs.append(out)
            if p.returncode != 0:
                raise RunError(f"{' '.join(argv)} exited with {p.returncode}:\n{out}")
        if not os.path.exists(path):
            raise RunError(f"{' '.join(procs[0][0])} wrote no --json rows:\n{outputs[0]}")
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    finally:
        for _, p in running:
            if p.poll() is None:
                p.kill()
                p.wait()
        if os.path.exists(path):
            os.unlink(path)
    for row in rows:
        for half in ("oop", "ip"):
            if row.get(f"{half}_wrong"):
                raise RunError(f"{' '.join(procs[0][0])}: {row['size']} B {half} has {row[f'{half}_wrong']} wrong")
    return rows
