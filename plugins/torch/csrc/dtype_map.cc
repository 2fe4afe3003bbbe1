// Torch dtype and ReduceOp to Myriad's element types and operators (the C enums of myriad.h).
#include "dtype_map.h"

#include <c10/util/Exception.h>

namespace torch_myriad {
namespace {

std::optional<myrDataType_t> realType(at::ScalarType s) {
  switch (s) {
    case at::kChar: return myrInt8;
    case at::kByte: return myrUint8;
    case at::kBool: return myrUint8;
    case at::kInt: return myrInt32;
    case at::kUInt32: return myrUint32;
    case at::kLong: return myrInt64;
    case at::kUInt64: return myrUint64;
    case at::kHalf: return myrFloat16;
    case at::kFloat: return myrFloat32;
    case at::kDouble: return myrFloat64;
    case at::kBFloat16: return myrBfloat16;
    case at::kFloat8_e4m3fn: return myrFloat8e4m3;
    case at::kFloat8_e5m2: return myrFloat8e5m2;
    case at::kComplexFloat: return myrFloat32;
    case at::kComplexDouble: return myrFloat64;
    default: return std::nullopt;
  }
}

}  // namespace

std::string opName(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

ReducePlan planReduce(at::ScalarType dtype, const c10d::ReduceOp& op) {
  const auto type = realType(dtype);
  TORCH_CHECK(type.has_value(), "myriad: cannot reduce ", c10::toString(dtype), " tensors with ", opName(op),
              ": Myriad has no such element type (it reduces int8, uint8, bool, int32, uint32, int64, uint64, "
              "float16, bfloat16, float32, float64, float8 and complex)");
  ReducePlan plan;
  plan.type = *type;
  const bool complex = at::isComplexType(dtype);
  if (complex) plan.countScale = 2;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: plan.op = myrSum; break;
    case c10d::ReduceOp::AVG: plan.op = myrAvg; break;
    case c10d::ReduceOp::PRODUCT: plan.op = myrProd; break;
    case c10d::ReduceOp::MIN: plan.op = myrMin; break;
    case c10d::ReduceOp::MAX: plan.op = myrMax; break;
    case c10d::ReduceOp::PREMUL_SUM: {
      plan.op = myrSum;
      auto* s = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
      TORCH_CHECK(s != nullptr, "myriad: PREMUL_SUM without its factor");
      if (s->tensor_factor.defined()) {
        plan.tensorFactor = s->tensor_factor;
      } else {
        plan.factor = s->double_factor;
      }
      break;
    }
    default:
      TORCH_CHECK(false, "myriad: ReduceOp ", opName(op),
                  " is not supported (Myriad reduces with SUM, PRODUCT, MIN, MAX, AVG and PREMUL_SUM)");
  }
  TORCH_CHECK(!complex || plan.op == myrSum || plan.op == myrAvg, "myriad: ", opName(op),
              " of complex tensors is not defined element-wise (SUM, AVG and PREMUL_SUM are)");
  if (dtype == at::kBool) {
    // A bool is 0 or 1: SUM behaves as logical or, PRODUCT as logical and, AVG is not meaningful.
    TORCH_CHECK(plan.op != myrAvg && !plan.premul(), "myriad: ", opName(op), " of bool tensors is not supported");
    if (plan.op == myrSum) plan.op = myrMax;
    if (plan.op == myrProd) plan.op = myrMin;
  }
  TORCH_CHECK(!plan.premul() || at::isFloatingType(dtype) || complex,
              "myriad: PREMUL_SUM needs a floating-point "
              "or complex tensor, not ",
              c10::toString(dtype));
  return plan;
}

at::Tensor reduceInput(const at::Tensor& t, const ReducePlan& plan) {
  if (plan.tensorFactor.defined()) return at::mul(t, plan.tensorFactor.to(t.device())).contiguous();
  if (plan.factor) return at::mul(t, *plan.factor).contiguous();
  return t.contiguous();
}

}  // namespace torch_myriad
