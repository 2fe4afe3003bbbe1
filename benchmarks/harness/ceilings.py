"""The physical limits printed beside the results: memory copy bandwidth (for shared memory) and iperf3's
TCP throughput over the veth link, one way and with both directions busy (for the tcp placement)."""
import json
import subprocess
import time


def memcpy_gbs(build, threads, size="16M"):
    out = subprocess.run([f"{build}/benchmarks/memcpy_bw", "--bytes", size, "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["gbs"]


def iperf3_gbs(pair, seconds, both_ways):
    """GB/s per direction from host 0 to host 1 (both_ways: the mean of the two directions run at once)."""
    port = "5213"
    server = subprocess.Popen(pair.exec(1, ["iperf3", "-s", "-1", "-B", pair.addr[1], "-p", port]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # until the server listens
            probe = subprocess.run(pair.exec(1, ["ss", "-Hltn", f"sport = :{port}"]), capture_output=True,
                                   text=True)
            if probe.stdout.strip():
                break
            time.sleep(0.1)
        argv = ["iperf3", "-c", pair.addr[1], "-p", port, "-t", str(seconds), "-J"] + (["--bidir"] if both_ways else [])
        result = json.loads(subprocess.run(pair.exec(0, argv), check=True, capture_output=True, text=True).stdout)
    finally:
        server.wait(timeout=30)
    end = result["end"]
    directions = [end["sum_received"]["bits_per_second"]]
    if both_ways:
        directions.append(end["sum_received_bidir_reverse"]["bits_per_second"])
    return sum(directions) / len(directions) / 8e9
