"""Python side of the benchmarks: runs the nccl-tests-style binaries (ours and the peers'), places ranks on
one host or on two network namespaces, measures ceilings, and reports. Used by benchmarks/compare and
benchmarks/sweep-algorithms."""
