// memcpy_bw: the memory-copy ceiling that benchmarks/compare prints beside the shared-memory results. Copies
// --bytes between two buffers touched beforehand (so no page faults are timed), split over --threads threads
// that start together, and prints the median over --iters of bytes copied per second as one JSON object:
//   memcpy_bw --bytes 16M --threads 2 --iters 20  →  {"bytes":16777216,"threads":2,"gbs":31.8}
#include <CLI/CLI.hpp>
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "benchmarks/common/options.h"

namespace {

// One timed copy of `bytes` by `threads` threads, each copying its slice; the barrier starts them together.
// Each worker reads the clock itself around its copy, and the copy lasts from the first start to the last
// end: the main thread may not even be running when the workers go (2 threads and it on 2 cores), so a
// clock read there after the barrier could start late and report an impossible rate.
double copySeconds(char* dst, const char* src, size_t bytes, int threads) {
  using Clock = std::chrono::steady_clock;
  std::barrier start(threads);
  std::vector<Clock::time_point> begins(static_cast<size_t>(threads)), ends(static_cast<size_t>(threads));
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const size_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
        start.arrive_and_wait();
        begins[static_cast<size_t>(t)] = Clock::now();
        std::memcpy(dst + lo, src + lo, hi - lo);
        ends[static_cast<size_t>(t)] = Clock::now();
      });
    }
  }  // joins
  auto first = *std::min_element(begins.begin(), begins.end());
  auto last = *std::max_element(ends.begin(), ends.end());
  return std::chrono::duration<double>(last - first).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"memory copy bandwidth (the shared-memory ceiling of benchmarks/compare)"};
  std::string bytesText = "16M";
  int threads = 1, iters = 20;
  app.add_option("--bytes", bytesText, "bytes per copy (K/M/G suffixes)")->capture_default_str();
  app.add_option("--threads", threads, "threads sharing each copy")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--iters", iters, "timed copies (the median is printed)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  size_t bytes = 0;
  if (!myriad::bench::parseSize(bytesText, &bytes) || bytes == 0) {
    std::fprintf(stderr, "memcpy_bw: --bytes %s is not a positive size (K/M/G suffixes)\n", bytesText.c_str());
    return 2;
  }
  std::vector<char> src(bytes, 1), dst(bytes, 0);       // value-initialised: every page touched before timing
  copySeconds(dst.data(), src.data(), bytes, threads);  // warm-up
  std::vector<double> seconds;
  for (int i = 0; i < iters; ++i) seconds.push_back(copySeconds(dst.data(), src.data(), bytes, threads));
  std::nth_element(seconds.begin(), seconds.begin() + iters / 2, seconds.end());
  std::printf("{\"bytes\":%zu,\"threads\":%d,\"gbs\":%.2f}\n", bytes, threads, bytes / seconds[iters / 2] / 1e9);
  return 0;
}
