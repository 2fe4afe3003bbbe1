"""Two "hosts" on one machine: two network namespaces joined by a veth pair, made and removed by us (root).
Addresses exist only on the link created here, so nothing leaves the machine or meets its other traffic.
The names carry our pid, so two runs (or a crashed earlier run) never collide."""
import os
import subprocess

SUBNET = "10.213.0.0/24"


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class VethPair:
    """with VethPair() as pair: pair.ns[i], pair.addr[i], pair.ifname[i] for hosts i = 0, 1;
    pair.exec(i, argv) is argv run inside host i's namespace."""

    def __init__(self):
        tag = f"myrc{os.getpid()}"
        self.ns = [f"{tag}a", f"{tag}b"]
        self.ifname = [f"{tag}a", f"{tag}b"]  # each end is named after its namespace (≤ 15 characters)
        self.addr = ["10.213.0.1", "10.213.0.2"]

    def __enter__(self):
        if os.geteuid() != 0:
            raise PermissionError("the tcp placement makes network namespaces: run as root")
        try:
            for ns in self.ns:
                _ip("netns", "add", ns)
                _ip("-n", ns, "link", "set", "lo", "up")
            _ip("link", "add", self.ifname[0], "netns", self.ns[0], "type", "veth", "peer", "name",
                self.ifname[1], "netns", self.ns[1])
            for ns, ifname, addr in zip(self.ns, self.ifname, self.addr):
                _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", ifname)
                _ip("-n", ns, "link", "set", ifname, "up")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for ns in self.ns:  # deleting a namespace deletes its veth end, and with it the other end
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def exec(self, host, argv):
        return ["ip", "netns", "exec", self.ns[host], *argv]
