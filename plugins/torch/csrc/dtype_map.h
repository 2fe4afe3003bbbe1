// How torch tensors are handed to Myriad: data-movement collectives move raw bytes (any dtype works);
// reductions need one of Myriad's element types and operators, and plan() says which, or why none fits.
// Invariant: a ReducePlan's count scale times a tensor's numel is the element count Myriad sees.
#pragma once

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "myriad/myriad.h"

namespace torch_myriad {

struct ReducePlan {
  myrDataType_t type = myrFloat32;
  myrRedOp_t op = myrSum;
  int64_t countScale = 1;        // 2 for complex tensors, reduced as interleaved (re, im) pairs
  std::optional<double> factor;  // PREMUL_SUM with a scalar factor
  at::Tensor tensorFactor;       // PREMUL_SUM with a one-element tensor factor
  bool premul() const { return factor.has_value() || tensorFactor.defined(); }
};

/// The Myriad type and operator for reducing `dtype` with `op`; throws c10::Error naming both when
/// Myriad has no such reduction (int16, bitwise operators, PRODUCT of complex numbers ...).
ReducePlan planReduce(at::ScalarType dtype, const c10d::ReduceOp& op);

/// A contiguous tensor holding what is to be reduced: `t` itself when it is contiguous and no factor
/// applies, otherwise a copy (multiplied by the PREMUL_SUM factor).
at::Tensor reduceInput(const at::Tensor& t, const ReducePlan& plan);

/// Element count Myriad sees for a contiguous tensor `t` reduced under `plan`.
inline size_t reduceCount(const at::Tensor& t, const ReducePlan& plan) {
  return static_cast<size_t>(t.numel() * plan.countScale);
}

std::string opName(const c10d::ReduceOp& op);

}  // namespace torch_myriad
