// Output formats. The column widths are nccl-tests' (size %12, count %12, type %8, redop %6, root %6, then
// per half: time %7, algbw %6.2f, busbw %6.2f, #wrong %5), which is what parsers of its output rely on; the
// optional floor column (--floor-gbps) comes after all of them.
#include "benchmarks/common/report.h"

#include <cmath>

namespace myriad::bench {
namespace {

// nccl-tests' time column: fewer decimals as the number grows, always 7 characters.
std::string timeText(double us) {
  char text[32];
  const char* format = us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f";
  std::snprintf(text, sizeof(text), format, us);
  return text;
}

void printHalf(std::FILE* out, const ResultHalf& h) {
  std::fprintf(out, "  %7s  %6.2f  %6.2f", timeText(h.timeUs).c_str(), h.algBw, h.busBw);
  if (h.checked) {
    std::fprintf(out, "  %5.0f", h.wrong);
  } else {
    std::fprintf(out, "  %5s", "N/A");
  }
}

// JSON has no NaN or infinity: write null for them.
std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

std::string jsonString(const std::string& s) {
  std::string text = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') text += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;  // names never hold control characters
    text += c;
  }
  return text + "\"";
}

std::string jsonHalf(const char* prefix, const ResultHalf& h) {
  const std::string p = prefix;
  return "\"" + p + "time_us\":" + jsonNumber(h.timeUs) + ",\"" + p + "algbw_gbs\":" + jsonNumber(h.algBw) + ",\"" + p +
         "busbw_gbs\":" + jsonNumber(h.busBw) + ",\"" + p +
         "wrong\":" + (h.checked ? jsonNumber(h.wrong) : std::string("null"));
}

}  // namespace

void printRunHeader(std::FILE* out, const Options& o, const RunDescription& run,
                    const std::vector<RankDescription>& ranks) {
  std::fprintf(out, "# Collective test starting: %s\n", run.program.c_str());
  std::fprintf(out,
               "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d "
               "agg iters: 1 validation: %d graph: 0\n",
               o.minBytes, o.maxBytes, o.stepFactor > 1 ? static_cast<size_t>(o.stepFactor) : o.stepBytes,
               o.stepFactor > 1 ? "factor" : "bytes", o.warmupIters, o.iters, o.check ? 1 : 0);
  const bool cuda = o.memory == "cuda";
  const std::string memory = o.memory + (run.memoryNote.empty() ? "" : " (" + run.memoryNote + ")");
  std::fprintf(out, "# %s: nranks %d launcher %s algo %s memory %s %s%s\n", run.title.c_str(), run.nranks,
               run.launcher.c_str(),
               !run.algo.empty()         ? run.algo.c_str()
               : run.library == "myriad" ? "(tuner)"
                                         : "(default)",
               memory.c_str(),
               cuda         ? "cuda stream per rank"
               : o.blocking ? "blocking (NULL stream)"
                            : "host stream",
               o.registerBuffers ? ", registered buffers" : "");
  std::fprintf(out, "#\n# Using devices\n");
  for (const RankDescription& r : ranks) {
    std::fprintf(out, "#  Rank %2d Group %2d Pid %6d on %10s device ", r.rank, 0, r.pid, r.host);
    if (r.device < 0) {
      std::fprintf(out, " host\n");
    } else {
      std::fprintf(out, "%2d %s\n", r.device, r.deviceName);
    }
  }
  std::fprintf(out, "#\n");
}

void printTableHeader(std::FILE* out, bool floor) {
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s", "", "", "", "", "");
  std::fprintf(out, "           out-of-place                       in-place          \n");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
  std::fprintf(out, "  %7s  %6s  %6s %6s", "time", "algbw", "busbw", "#wrong");
  std::fprintf(out, "  %7s  %6s  %6s %6s%s\n", "time", "algbw", "busbw", "#wrong", floor ? "    floor" : "");
  std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
  std::fprintf(out, "  %7s  %6s  %6s  %5s", "(us)", "(GB/s)", "(GB/s)", "");
  std::fprintf(out, "  %7s  %6s  %6s  %5s%s\n", "(us)", "(GB/s)", "(GB/s)", "", floor ? "     (us)" : "");
  std::fflush(out);
}

void printRow(std::FILE* out, const ResultRow& row) {
  std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6d", row.bytes, row.count, row.type.c_str(), row.op.c_str(), row.root);
  printHalf(out, row.outOfPlace);
  printHalf(out, row.inPlace);
  if (row.floorUs >= 0) std::fprintf(out, "  %7s", timeText(row.floorUs).c_str());
  if (!row.algo.empty()) std::fprintf(out, "  %s", row.algo.c_str());
  std::fprintf(out, "\n");
  std::fflush(out);
}

void printFooter(std::FILE* out, double wrongTotal, double avgBusBw) {
  std::fprintf(out, "# Out of bounds values : %.0f %s\n", wrongTotal, wrongTotal > 0 ? "FAILED" : "OK");
  std::fprintf(out, "# Avg bus bandwidth    : %g \n", avgBusBw);
  std::fprintf(out, "#\n");
  std::fflush(out);
}

void writeJsonRow(std::FILE* out, const RunDescription& run, const Options& o, const ResultRow& row) {
  std::string line =
      "{\"library\":" + jsonString(run.library) + ",\"collective\":" + jsonString(run.collective) +
      ",\"nranks\":" + std::to_string(run.nranks) + ",\"algo\":" + jsonString(row.algo.empty() ? run.algo : row.algo) +
      ",\"memory\":" + jsonString(o.memory) + ",\"blocking\":" + (o.blocking && o.memory != "cuda" ? "1" : "0") +
      ",\"size\":" + std::to_string(row.bytes) + ",\"count\":" + std::to_string(row.count) +
      ",\"type\":" + jsonString(row.type) + ",\"redop\":" + jsonString(row.op) +
      ",\"root\":" + std::to_string(row.root) + "," + jsonHalf("oop_", row.outOfPlace) + "," +
      jsonHalf("ip_", row.inPlace) + (row.floorUs >= 0 ? ",\"floor_us\":" + jsonNumber(row.floorUs) : std::string()) +
      "}\n";
  std::fputs(line.c_str(), out);
  std::fflush(out);
}

}  // namespace myriad::bench
