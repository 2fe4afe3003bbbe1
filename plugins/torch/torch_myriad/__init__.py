"""torch_myriad: Myriad's collectives as a torch.distributed backend.

``import torch_myriad`` registers the backend "myriad" for CPU tensors, and for CUDA tensors when it was
built against a torch with CUDA; then ``torch.distributed.init_process_group("myriad", ...)`` (or
"cpu:gloo,cuda:myriad", "cpu:myriad,cuda:nccl" and the like) uses it.
The communicator is bootstrapped through the c10d Store torch hands over, so torchrun and the env://,
tcp:// and file:// init methods all work.
"""

import torch
import torch.distributed as dist

from . import _C  # noqa: E402  (needs torch.distributed's classes registered first)

__all__ = ["BackendMyriad", "myriad_version", "DEVICES"]

BackendMyriad = _C.BackendMyriad
myriad_version = _C.myriad_version
# The device types "myriad" alone stands for. Built against a CPU torch, the extension takes CPU tensors
# only and "cuda" is left to other backends.
DEVICES = ["cpu", "cuda"] if _C.cuda else ["cpu"]


def _create(dist_opts, backend_options):
    """torch.distributed's extended-API factory: one backend for the group these options describe."""
    del backend_options  # the group's timeout comes in dist_opts
    return _C.BackendMyriad(dist_opts.store, dist_opts.group_rank, dist_opts.group_size, dist_opts.timeout)


if not hasattr(dist.Backend, "MYRIAD"):
    dist.Backend.register_backend("myriad", _create, extended_api=True, devices=DEVICES)
