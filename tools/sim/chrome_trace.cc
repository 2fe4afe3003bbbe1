// writeChromeTrace: lanes by first fit over each rank's steps sorted by start; the JSON written line by line
// (the names are ours: no escaping needed beyond the title's quotes and backslashes).
#include "tools/sim/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>

namespace myriad::netsim {
namespace {

std::string stepName(Schedule::Kind kind, int peerRank) {
  const std::string peer = std::to_string(peerRank);
  switch (kind) {
    case Schedule::Kind::kSend: return "send to " + peer;
    case Schedule::Kind::kRecv: return "recv from " + peer;
    case Schedule::Kind::kRecvReduce: return "recv-reduce from " + peer;
    case Schedule::Kind::kReduce: return "reduce";
    case Schedule::Kind::kScale: return "scale";
    case Schedule::Kind::kCopy: return "copy";
    case Schedule::Kind::kJoin: return "join";
  }
  return "step";
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace

Status writeChromeTrace(const std::string& path, const std::string& title, const PlanSet& plans,
                        const std::vector<StepSlice>& steps) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) return systemError("myriad-sim: --trace " + path, errno);
  std::vector<std::vector<const StepSlice*>> byRank(static_cast<size_t>(plans.nranks()));
  for (const StepSlice& s : steps)
    if (s.rank >= 0 && static_cast<size_t>(s.rank) < byRank.size()) byRank[static_cast<size_t>(s.rank)].push_back(&s);
  std::fprintf(f.get(), "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"run\":%s},\"traceEvents\":[\n",
               quoted(title).c_str());
  bool first = true;
  auto event = [&](const std::string& json) {
    std::fprintf(f.get(), "%s%s", first ? "" : ",\n", json.c_str());
    first = false;
  };
  for (size_t r = 0; r < byRank.size(); ++r) {
    const int pid = static_cast<int>(r);
    event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"rank " +
          std::to_string(pid) + "\"}}");
    event("{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
          ",\"args\":{\"sort_index\":" + std::to_string(pid) + "}}");
    auto& mine = byRank[r];
    std::stable_sort(mine.begin(), mine.end(),
                     [](const StepSlice* a, const StepSlice* b) { return a->start < b->start; });
    std::vector<double> laneEnd;  // first fit: the lowest lane free at the step's start
    for (const StepSlice* s : mine) {
      size_t lane = 0;
      while (lane < laneEnd.size() && laneEnd[lane] > s->start) ++lane;
      if (lane == laneEnd.size()) laneEnd.push_back(0);
      laneEnd[lane] = s->end;
      const PlanShape& shape = plans.shape(pid);
      const size_t i = static_cast<size_t>(s->step);
      char times[96];
      std::snprintf(times, sizeof times, "\"ts\":%.3f,\"dur\":%.3f", s->start * 1e6, (s->end - s->start) * 1e6);
      const int peer = Schedule::isMessage(shape.kind[i]) ? plans.peer(pid, shape.slot[i]) : -1;
      event("{\"name\":" + quoted(stepName(shape.kind[i], peer)) + ",\"cat\":\"step\",\"ph\":\"X\"," + times +
            ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(lane) +
            ",\"args\":{\"step\":" + std::to_string(s->step) + ",\"bytes\":" + std::to_string(shape.bytes[i]) + "}}");
    }
  }
  std::fprintf(f.get(), "\n]}\n");
  if (std::ferror(f.get())) return systemError("myriad-sim: --trace " + path, errno);
  return Status::ok();
}

}  // namespace myriad::netsim
