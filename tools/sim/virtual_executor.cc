// VirtualExecutor: the event loop. Events are step completions at a time (a priority queue) and flow
// completions (the FlowNetwork says when the next one is due); time jumps to whichever comes first.
#include "tools/sim/virtual_executor.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>

#include "plan/dtype.h"
#include "tools/sim/path_ports.h"
#include "tools/sim/sim_paths.h"

namespace myriad::netsim {
namespace {

using Kind = Schedule::Kind;

// One direction of one rank pair: its sends (steps of src) and receives (steps of dst) in the order added.
struct Channel {
  int src = 0, dst = 0;
  std::vector<int> sends, recvs;
  std::vector<char> sendPosted, recvPosted;
  std::vector<char> buffered;     // written into the socket buffers: its send completed when written
  std::vector<double> arrived;    // when it was delivered, -1 before (its receive completes once posted)
  size_t written = 0;             // the first message not written yet
  size_t next = 0;                // the first message not on the wire yet
  bool onWire = false;            // a message of this channel is being sent: the next one waits (one byte stream)
  double backlog = 0;             // bytes written into the socket buffers and not yet read by their receives
  std::optional<SimPaths> paths;  // made when its first message starts
};

struct Message {
  int channel = 0;
  size_t index = 0;
  int partsLeft = 0;
  double latency = 0;
  double start = 0;  // when its flows started: a part's service time ends when its flow does
};

struct Event {
  double at;
  uint64_t seq;
  int rank, step;
  bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

double touched(const Schedule::StepInfo& s) {
  switch (s.kind) {
    case Kind::kReduce:
    case Kind::kRecvReduce: return 3.0 * static_cast<double>(s.n * dtypeSize(s.dtype));  // read two, write one
    case Kind::kScale: return 2.0 * static_cast<double>(s.n * dtypeSize(s.dtype));
    case Kind::kCopy: return 2.0 * static_cast<double>(s.n);
    default: return 0;
  }
}

class Run {
 public:
  Run(const Fabric& fabric, int paths, PathPolicy policy, double eagerBytes, const std::vector<Schedule>& schedules,
      bool trace, std::vector<LinkFailure> failures)
      : fabric_(fabric),
        paths_(paths),
        policy_(policy),
        eagerBytes_(eagerBytes),
        s_(schedules),
        net_(capacities(fabric)),
        trace_(trace) {
    for (LinkFailure& f : failures) pending_.push_back({f.at, std::move(f.links), f.resumeAfter, {}});
  }

  Result<RunResult> go(const std::vector<Elephant>& elephants) {
    const int n = static_cast<int>(s_.size());
    if (n != fabric_.spec().nranks)
      return internalError("sim: " + std::to_string(n) + " schedules for " + std::to_string(fabric_.spec().nranks) +
                           " ranks");
    for (const Elephant& e : elephants) net_.start(e.links, FlowNetwork::kForever, kElephant);
    result_.rankFinish.assign(static_cast<size_t>(n), 0);
    result_.spineFlows.assign(static_cast<size_t>(fabric_.spec().spines), 0);
    MYR_TRY(index());
    busy_.assign(static_cast<size_t>(n), 0);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < static_cast<int>(s_[r].size()); ++i)
        if (waits_[r][i] == 0) post(r, i);
    std::vector<uint64_t> finished;
    while (left_ > 0) {
      double tNet = now_ + net_.nextFinish();
      double tEv = events_.empty() ? FlowNetwork::kForever : events_.top().at;
      double tScenario = FlowNetwork::kForever;
      for (const Scenario& s : pending_) tScenario = std::min(tScenario, s.at);
      double t = std::min({tNet, tEv, tScenario});
      if (t == FlowNetwork::kForever) return Status(Code::kInternalError, deadlock());
      finished.clear();
      net_.advance(t - now_, &finished);
      now_ = t;
      for (uint64_t tag : finished) flowDone(tag);
      if (tScenario <= now_) scenarios();
      while (!events_.empty() && events_.top().at <= now_) {
        Event e = events_.top();
        events_.pop();
        complete(e.rank, e.step);
      }
    }
    result_.seconds = 0;
    for (double f : result_.rankFinish) result_.seconds = std::max(result_.seconds, f);
    result_.linkBytes = net_.carried();
    result_.rerates = net_.stats().rerates, result_.rerateFlows = net_.stats().rerateFlows;
    result_.rerateLinks = net_.stats().rerateLinks;
    return std::move(result_);
  }

 private:
  static std::vector<double> capacities(const Fabric& f) {
    std::vector<double> c;
    for (const Link& l : f.links()) c.push_back(l.capacity);
    return c;
  }

  Status index() {
    const int n = static_cast<int>(s_.size());
    waits_.resize(static_cast<size_t>(n)), after_.resize(static_cast<size_t>(n)), msg_.resize(static_cast<size_t>(n));
    chan_.resize(static_cast<size_t>(n));
    afterStart_.resize(static_cast<size_t>(n));
    done_.resize(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      const Schedule& s = s_[r];
      if (s.next())
        return notSupported("sim: " + s.name() + " plans in two stages (data-dependent); the simulator runs " +
                            "one-stage plans only");
      const size_t m = s.size();
      waits_[r].assign(m, 0), msg_[r].assign(m, -1), chan_[r].assign(m, -1), done_[r].assign(m, 0);
      if (trace_) postedAt_.emplace_back(m, 0.0);
      left_ += m;
      // after_[r]: the steps each step unblocks, in one array (CSR): no allocation per step.
      std::vector<int>& start = afterStart_[r];
      std::vector<int>& list = after_[r];
      start.assign(m + 1, 0);
      for (size_t i = 0; i < m; ++i)
        for (Schedule::Step d : s.deps(static_cast<Schedule::Step>(i)))
          ++start[static_cast<size_t>(d) + 1], ++waits_[r][i];
      for (size_t i = 0; i < m; ++i) start[i + 1] += start[i];
      list.resize(static_cast<size_t>(start[m]));
      {
        std::vector<int> fill(start.begin(), start.end() - 1);
        for (size_t i = 0; i < m; ++i)
          for (Schedule::Step d : s.deps(static_cast<Schedule::Step>(i)))
            list[static_cast<size_t>(fill[static_cast<size_t>(d)]++)] = static_cast<int>(i);
      }
      for (size_t i = 0; i < m; ++i) {
        const auto& st = s.steps()[i];
        if (!Schedule::isMessage(st.kind)) continue;
        if (st.peer < 0 || st.peer >= n || st.peer == r)
          return internalError("sim: rank " + std::to_string(r) + " step " + std::to_string(i) + " names peer " +
                               std::to_string(st.peer));
        const bool sends = st.kind == Kind::kSend;
        Channel& c = channel(sends ? r : st.peer, sends ? st.peer : r);
        chan_[r][i] = static_cast<int>(&c - channels_.data());
        auto& list = sends ? c.sends : c.recvs;
        msg_[r][i] = static_cast<int>(list.size());
        list.push_back(static_cast<int>(i));
      }
    }
    for (Channel& c : channels_) {
      if (c.sends.size() != c.recvs.size())
        return internalError("sim: rank " + std::to_string(c.src) + " sends " + std::to_string(c.sends.size()) +
                             " messages to rank " + std::to_string(c.dst) + ", which receives " +
                             std::to_string(c.recvs.size()));
      c.sendPosted.assign(c.sends.size(), 0), c.recvPosted.assign(c.recvs.size(), 0);
      c.buffered.assign(c.sends.size(), 0), c.arrived.assign(c.sends.size(), -1);
    }
    return Status::ok();
  }

  Channel& channel(int src, int dst) {
    uint64_t key = uint64_t(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst);
    auto [it, fresh] = channelOf_.try_emplace(key, static_cast<int>(channels_.size()));
    if (fresh) {
      channels_.emplace_back();
      channels_.back().src = src, channels_.back().dst = dst;
    }
    return channels_[static_cast<size_t>(it->second)];
  }

  void post(int r, int i) {
    const auto& st = s_[r].steps()[static_cast<size_t>(i)];
    if (trace_) postedAt_[static_cast<size_t>(r)][static_cast<size_t>(i)] = now_;
    switch (st.kind) {
      case Kind::kSend:
      case Kind::kRecv:
      case Kind::kRecvReduce: {
        const bool sends = st.kind == Kind::kSend;
        const int id = chan_[r][static_cast<size_t>(i)];
        Channel& c = channels_[static_cast<size_t>(id)];
        const size_t k = static_cast<size_t>(msg_[r][i]);
        (sends ? c.sendPosted : c.recvPosted)[k] = 1;
        if (!sends && c.arrived[k] >= 0) received(c, k, std::max(now_, c.arrived[k]));  // its bytes came ahead
        startReady(id);
        break;
      }
      case Kind::kJoin: complete(r, i); break;
      default: compute(r, i, touched(st)); break;
    }
  }

  void compute(int r, int i, double bytes) {
    double& busy = busy_[static_cast<size_t>(r)];
    busy = std::max(busy, now_) + bytes / fabric_.spec().memBytesPerSec;
    events_.push({busy, seq_++, r, i});
  }

  // A flow's tag: its message and which of the message's parts (paths) it is.
  static constexpr uint64_t kParts = 64;
  static uint64_t flowTag(uint64_t message, int part) { return message * kParts + static_cast<uint64_t>(part); }

  // Failures due now cut their links and stop the flows on them; resumptions due restart those flows
  // (their bytes left) on the route ECMP now picks. A flow with no live route stays stopped: the run then
  // ends as a deadlock that names the waiting ranks.
  void scenarios() {
    std::vector<Scenario> later;
    for (Scenario& s : pending_) {
      if (s.at > now_) {
        later.push_back(std::move(s));
      } else if (!s.links.empty()) {  // a failure
        Scenario resume{now_ + s.resumeAfter, {}, 0, {}};
        for (int l : s.links) fabric_.fail(l);
        for (int l : s.links)
          for (auto& cut : net_.removeOn(l))
            if (cut.second != kElephant) resume.flows.push_back(cut);
        result_.flowsCut += resume.flows.size();
        if (!resume.flows.empty()) later.push_back(std::move(resume));
      } else {
        for (const auto& [left, tag] : s.flows) {
          const Message& m = messages_[tag / kParts];
          const Channel& c = channels_[static_cast<size_t>(m.channel)];
          Route route = fabric_.route(c.src, c.dst, c.paths->port(static_cast<int>(tag % kParts)));
          if (fabric_.crossesDead(route))
            ++stranded_;
          else
            net_.start(std::move(route.links), left, tag);
        }
      }
    }
    pending_ = std::move(later);
  }

  // Writes the channel's posted sends into its socket buffers while they fit (each such send completes now),
  // then puts the written messages on the wire one after the other. A message larger than the buffers
  // waits for its receive and an empty backlog, and streams as it is read (its send completes on delivery).
  void startReady(int id) {
    Channel& c = channels_[static_cast<size_t>(id)];
    while (c.written < c.sends.size() && c.sendPosted[c.written]) {
      const size_t k = c.written;
      const double bytes = static_cast<double>(s_[c.src].steps()[static_cast<size_t>(c.sends[k])].n);
      if (c.backlog + bytes <= eagerBytes_) {
        c.backlog += bytes;
        c.buffered[k] = 1;
        events_.push({now_, seq_++, c.src, c.sends[k]});
      } else if (!c.recvPosted[k] || c.backlog > 0) {
        break;
      }
      ++c.written;
    }
    while (!c.onWire && c.next < c.written) {
      const size_t k = c.next++;
      const double bytes = static_cast<double>(s_[c.src].steps()[static_cast<size_t>(c.sends[k])].n);
      const int parts = fabric_.hostOf(c.src) == fabric_.hostOf(c.dst) ? 1 : paths_;
      if (!c.paths) c.paths.emplace(fabric_.spec().seed, c.src, c.dst, parts, policy_, now_);
      Message m{id, k, parts, 0, now_};
      c.paths->split(bytes);
      const uint64_t tag = messages_.size();
      ++result_.messages;
      for (int p = 0; p < parts; ++p) {
        Route route = fabric_.route(c.src, c.dst, c.paths->port(p));
        m.latency = std::max(m.latency, route.latency);
        if (route.spine >= 0) ++result_.spineFlows[static_cast<size_t>(route.spine)];
        ++result_.flows;
        if (bytes == 0) continue;
        if (fabric_.crossesDead(route)) {  // no live path: this part never arrives
          ++stranded_;
          continue;
        }
        net_.start(std::move(route.links), c.paths->part(p), flowTag(tag, p));
      }
      if (bytes == 0) m.partsLeft = 0;
      messages_.push_back(m);
      if (m.partsLeft == 0) {
        deliver(tag);
      } else {
        c.onWire = true;
      }
    }
  }

  void flowDone(uint64_t flow) {
    if (flow == kElephant) return;
    const uint64_t tag = flow / kParts;
    Message& m = messages_[tag];
    Channel& c = channels_[static_cast<size_t>(m.channel)];
    // The policy's sample: this part's service time (adaptive: may re-path one of the pair's paths).
    if (c.paths->served(static_cast<int>(flow % kParts), now_ - m.start, now_)) ++result_.repaths;
    if (--m.partsLeft > 0) return;
    const int id = m.channel;
    channels_[static_cast<size_t>(id)].onWire = false;
    deliver(tag);
    startReady(id);  // may add messages: no reference into messages_ is held across it
  }

  void deliver(uint64_t tag) {
    const Message& m = messages_[tag];
    Channel& c = channels_[static_cast<size_t>(m.channel)];
    const double at = now_ + m.latency;
    if (!c.buffered[m.index]) events_.push({at, seq_++, c.src, c.sends[m.index]});
    c.arrived[m.index] = at;
    // A message whose receive is not posted yet waits in the buffers for it (post()).
    if (c.recvPosted[m.index]) received(c, m.index, at);
  }

  // Message k of channel c is read by its receive at `at`: the receive is done then, or once reduced, and its
  // bytes leave the socket buffers.
  void received(Channel& c, size_t k, double at) {
    if (c.buffered[k]) c.backlog -= static_cast<double>(s_[c.src].steps()[static_cast<size_t>(c.sends[k])].n);
    const int r = c.dst, recv = c.recvs[k];
    const auto& st = s_[r].steps()[static_cast<size_t>(recv)];
    if (st.kind == Kind::kRecvReduce) {
      double& busy = busy_[static_cast<size_t>(r)];
      busy = std::max(busy, at) + touched(st) / fabric_.spec().memBytesPerSec;
      events_.push({busy, seq_++, r, recv});
    } else {
      events_.push({at, seq_++, r, recv});
    }
  }

  void complete(int r, int i) {
    char& d = done_[r][static_cast<size_t>(i)];
    if (d) return;
    d = 1, --left_;
    result_.rankFinish[static_cast<size_t>(r)] = std::max(result_.rankFinish[static_cast<size_t>(r)], now_);
    if (trace_) result_.steps.push_back({r, i, postedAt_[static_cast<size_t>(r)][static_cast<size_t>(i)], now_});
    const std::vector<int>& start = afterStart_[r];
    for (int k = start[static_cast<size_t>(i)]; k < start[static_cast<size_t>(i) + 1]; ++k) {
      const int j = after_[r][static_cast<size_t>(k)];
      if (--waits_[r][static_cast<size_t>(j)] == 0) post(r, j);
    }
  }

  std::string deadlock() const {
    std::string o = "sim: deadlock at " + std::to_string(now_ * 1e6) + " us: no flow or step can finish;";
    if (stranded_ > 0)
      o += " " + std::to_string(stranded_) + " flows found no live path after a link failure (no spine left " +
           "between their leaves);";
    int shown = 0;
    for (size_t r = 0; r < s_.size() && shown < 8; ++r)
      for (size_t i = 0; i < done_[r].size(); ++i)
        if (!done_[r][i] && waits_[r][i] == 0) {
          o += "\n  rank " + std::to_string(r) + " waits in step " + std::to_string(i);
          ++shown;
          break;
        }
    return o;
  }

  static constexpr uint64_t kElephant = ~uint64_t{0};
  struct Scenario {  // a failure (links) or a resumption (flows: bytes left and tag) due at `at`
    double at;
    std::vector<int> links;
    double resumeAfter;
    std::vector<std::pair<double, uint64_t>> flows;
  };

  Fabric fabric_;  // a copy: failures change its routes
  int paths_;
  PathPolicy policy_;
  double eagerBytes_;
  const std::vector<Schedule>& s_;
  FlowNetwork net_;
  RunResult result_;
  double now_ = 0;
  uint64_t seq_ = 0;
  size_t left_ = 0;
  std::vector<std::vector<int>> waits_, msg_, chan_, after_, afterStart_;  // chan_: a message step's channel
  std::vector<std::vector<char>> done_;
  std::vector<double> busy_;
  bool trace_ = false;
  std::vector<std::vector<double>> postedAt_;  // trace_: when each step was posted
  std::vector<Channel> channels_;
  std::unordered_map<uint64_t, int> channelOf_;
  std::vector<Message> messages_;
  std::vector<Scenario> pending_;
  uint64_t stranded_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

}  // namespace

VirtualExecutor::VirtualExecutor(const Fabric& fabric, int paths, std::vector<Elephant> elephants)
    : fabric_(fabric), paths_(std::clamp(paths, 1, 64)), elephants_(std::move(elephants)) {}

Result<RunResult> VirtualExecutor::run(const std::vector<Schedule>& schedules) {
  Run r(fabric_, paths_, policy_, eagerBytes_, schedules, trace_, failures_);
  return r.go(elephants_);
}

}  // namespace myriad::netsim
