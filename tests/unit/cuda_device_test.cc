// unit tier (CUDA builds only): openCudaDevice() on whatever machine runs the tests. Without a driver or GPU
// (CI) it must return an error that says so, without crashing; with one, a device that describes itself.
#include "device/cuda/cuda_device.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace myriad {
namespace {

TEST(CudaDevice, OpensOrSaysWhyNotOnTheNoGpuPath) {
  Result<std::unique_ptr<Device>> r = openCudaDevice();
  if (r.isOk()) {
    ASSERT_NE(r.value(), nullptr);
    EXPECT_STREQ(r.value()->name(), "cuda");
    EXPECT_FALSE(r.value()->describe().empty());
    std::printf("%s\n", r.value()->describe().c_str());
    return;
  }
  const std::string& msg = r.status().message();
  EXPECT_EQ(r.status().code(), Code::kUnhandledCudaError);
  EXPECT_NE(msg.find("CUDA"), std::string::npos) << msg;
  std::printf("no CUDA here: %s\n", msg.c_str());
  // A second call gives the same answer (nothing left half-initialised).
  Result<std::unique_ptr<Device>> again = openCudaDevice();
  EXPECT_EQ(again.isOk(), r.isOk());
}

}  // namespace
}  // namespace myriad
