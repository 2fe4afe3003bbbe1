"""Prints, for CMake, how to build an extension against the torch this interpreter imports: one
`name=value` a line, lists separated by '|' (';' would split the lines' list in CMake). Exits 1 with the reason when torch cannot be imported."""

import sys

try:
    import torch
    from torch.utils import cpp_extension
except ImportError as e:
    print(f"cannot import torch ({e})", file=sys.stderr)
    sys.exit(1)

print(f"version={torch.__version__}")
print(f"cuda={1 if torch.version.cuda else 0}")
print(f"cxx11_abi={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
print("include_dirs=" + "|".join(cpp_extension.include_paths()))
print("library_dirs=" + "|".join(cpp_extension.library_paths()))
