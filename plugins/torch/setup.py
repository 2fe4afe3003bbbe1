"""Builds torch_myriad against the torch installed in this environment and an installed Myriad.

Myriad is found through MYRIAD_PREFIX (an install prefix: include/myriad/myriad.h and lib/libmyriad.so,
as `cmake --install` lays them out) or, without it, through pkg-config's myriad.pc. Install with
    pip install --no-build-isolation ./plugins/torch
so that the build sees the installed torch (an isolated build would fetch another one).

When that torch has CUDA (torch.version.cuda is set, GPU or not), the extension takes CUDA tensors too
(MYRIAD_TORCH_CUDA=1). It reaches CUDA only through c10's device-generic streams and events, so it needs
neither nvcc nor a CUDA header: the same sources build against a CPU torch. MYRIAD_TORCH_CUDA=0 in the
environment builds a CPU-only extension against a CUDA torch.
"""

import os
import subprocess
import sys

from setuptools import setup

try:
    import torch  # noqa: F401
    from torch.utils.cpp_extension import BuildExtension, CppExtension
except ImportError:
    sys.exit("torch_myriad: install torch first, then: pip install --no-build-isolation ./plugins/torch")


def myriad_paths():
    prefix = os.environ.get("MYRIAD_PREFIX")
    if prefix:
        include = os.path.join(prefix, "include")
        libs = [d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
                if os.path.exists(os.path.join(d, "libmyriad.so"))]
        if not os.path.exists(os.path.join(include, "myriad", "myriad.h")) or not libs:
            sys.exit(f"torch_myriad: MYRIAD_PREFIX={prefix} has no include/myriad/myriad.h and lib/libmyriad.so")
        return [include], libs
    try:
        out = subprocess.run(["pkg-config", "--cflags-only-I", "--libs-only-L", "myriad"], check=True,
                             capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        sys.exit("torch_myriad: Myriad not found: set MYRIAD_PREFIX to its install prefix, "
                 "or PKG_CONFIG_PATH to the folder of its myriad.pc")
    return [f[2:] for f in out if f.startswith("-I")], [f[2:] for f in out if f.startswith("-L")]


include_dirs, library_dirs = myriad_paths()
sources = ["dtype_map.cc", "device_streams.cc", "work.cc", "backend.cc", "collectives.cc", "module.cc"]
cuda = torch.version.cuda is not None and os.environ.get("MYRIAD_TORCH_CUDA", "1") != "0"

setup(
    name="torch_myriad",
    version="0.1.0",
    description="Myriad collective communication as a torch.distributed backend",
    packages=["torch_myriad"],
    ext_modules=[
        CppExtension(
            name="torch_myriad._C",
            sources=[os.path.join("csrc", s) for s in sources],
            include_dirs=include_dirs,
            library_dirs=library_dirs,
            libraries=["myriad"],
            define_macros=[("MYRIAD_TORCH_CUDA", "1" if cuda else "0")],
            extra_compile_args=["-O2", "-g0"],
            extra_link_args=[f"-Wl,-rpath,{d}" for d in library_dirs],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.9",
)
