"""python -m torch_myriad: the version, how this package was built, and the transports this machine offers.

The transports are judged as the communicator judges them at init: shm and tcp always; rdma when the build
has it, libibverbs.so.1 loads and a device has an active port (MYRIAD_NET=tcp turns it off).
"""

import ctypes
import os

import torch

import torch_myriad
from torch_myriad import _build


def _rdma_devices():
    """(device, port, state) of every RDMA port, from sysfs."""
    root = "/sys/class/infiniband"
    ports = []
    for dev in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        pdir = os.path.join(root, dev, "ports")
        for port in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []:
            try:
                with open(os.path.join(pdir, port, "state")) as f:
                    state = f.read().split(":")[-1].strip()
            except OSError:
                state = "unknown"
            ports.append((dev, port, state))
    return ports


def _rdma_line():
    if not _build.RDMA:
        return "no (built without rdma-core's headers)"
    try:
        ctypes.CDLL("libibverbs.so.1")
    except OSError:
        return "no (libibverbs.so.1 not found: install rdma-core)"
    ports = _rdma_devices()
    if not ports:
        return "no (no RDMA device)"
    active = [f"{d}:{p}" for d, p, s in ports if s == "ACTIVE"]
    listed = ", ".join(f"{d}:{p} {s}" for d, p, s in ports)
    if os.environ.get("MYRIAD_NET") == "tcp":
        return f"no (MYRIAD_NET=tcp; ports: {listed})"
    return ("yes" if active else "no (no active port)") + f" ({listed})"


def main():
    v = torch_myriad.myriad_version
    print(f"torch_myriad {_build.MYRIAD_VERSION}: Myriad {v // 10000}.{v // 100 % 100}.{v % 100}, "
          f"torch {torch.__version__} (built against {_build.TORCH_VERSION})")
    print(f"package     : {os.path.dirname(torch_myriad.__file__)}")
    print(f"build       : {_build.BUILD_TYPE}, CUDA {'on' if _build.CUDA else 'off'}, "
          f"rdma {'on' if _build.RDMA else 'off'}, hwloc {'on' if _build.HWLOC else 'off'}, "
          f"pugixml {'on' if _build.PUGIXML else 'off'}")
    print(f"devices     : {', '.join(torch_myriad.DEVICES)} (CUDA tensors: "
          f"{'yes' if _build.TORCH_CUDA else 'no'}; GPUs visible: {torch.cuda.device_count()})")
    print(f"transports  : shm yes, tcp yes, rdma {_rdma_line()}")


if __name__ == "__main__":
    main()
