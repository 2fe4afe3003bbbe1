// VirtualExecutor: the event loop. Events are step completions at a time (a priority queue) and flow
// completions (the FlowNetwork says when the next one is due); time jumps to whichever comes first.
#include "tools/sim/virtual_executor.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>

#include "tools/sim/path_ports.h"
#include "tools/sim/sim_paths.h"
#include "tools/sim/window.h"

namespace myriad::netsim {
namespace {

using Kind = Schedule::Kind;

// A step's state in its rank's window: its dependencies left to finish, or one of these.
constexpr int32_t kUntouched = -1;  // no dependency finished yet: PlanShape::numDeps left
constexpr int32_t kDone = -2;       // finished (0: posted, not finished)

// One message of a channel, from when it is first needed (written, on the wire, or its send or receive
// posted out of order) until it is read.
struct MessageState {
  double arrived = -1;                          // when it was delivered, -1 before (its receive completes once posted)
  bool sendPosted = false, recvPosted = false;  // posted beyond its channel's posted prefix
  bool buffered = false;                        // written into the socket buffers: its send completed when written
  bool read = false;                            // its receive has taken it: the state is no longer needed
};

// One direction of one rank pair. Its k-th message is the k-th send of src to its slot srcSlot and the k-th
// receive of dst from its slot dstSlot.
struct Channel {
  int src = 0, dst = 0;
  uint32_t srcSlot = 0, dstSlot = 0;
  size_t count = 0;           // messages
  Window<MessageState> msgs;  // from the first message not read yet
  // Every send (receive) below this is posted: posts in order need no state of their own, so a rank that
  // posts all its sends at once (a tree leaf) holds state for the messages in the socket buffers and on the
  // wire, not for every one it will send.
  size_t sendsPosted = 0, recvsPosted = 0;
  size_t written = 0;             // the first message not written yet
  size_t next = 0;                // the first message not on the wire yet
  bool onWire = false;            // a message of this channel is being sent: the next one waits (one byte stream)
  double backlog = 0;             // bytes written into the socket buffers and not yet read by their receives
  std::optional<SimPaths> paths;  // made when its first message starts
  // The message on the wire: its index, flows left, latency, and when its flows started (a part's service
  // time ends when its flow does).
  size_t wire = 0;
  int partsLeft = 0;
  double latency = 0, start = 0;
};

struct Event {
  double at;
  uint64_t seq;
  int rank, step;
  bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

class Run {
 public:
  Run(const Fabric& fabric, int paths, PathPolicy policy, double eagerBytes, const PlanSet& plans, bool trace,
      std::vector<LinkFailure> failures)
      : fabric_(fabric),
        paths_(paths),
        policy_(policy),
        eagerBytes_(eagerBytes),
        p_(plans),
        net_(capacities(fabric)),
        trace_(trace) {
    for (LinkFailure& f : failures) pending_.push_back({f.at, std::move(f.links), f.resumeAfter, {}});
  }

  Result<RunResult> go(const std::vector<Elephant>& elephants) {
    const int n = p_.nranks();
    if (n != fabric_.spec().nranks)
      return internalError("sim: " + std::to_string(n) + " plans for " + std::to_string(fabric_.spec().nranks) +
                           " ranks");
    for (const Elephant& e : elephants) {
      if (e.links.empty() || e.links.size() > FlowNetwork::kMaxLinks)
        return invalidArgument("sim: an elephant crosses " + std::to_string(e.links.size()) + " links; want 1 to " +
                               std::to_string(FlowNetwork::kMaxLinks));
      for (int l : e.links)
        if (l < 0 || static_cast<size_t>(l) >= fabric_.links().size() ||
            std::count(e.links.begin(), e.links.end(), l) > 1)
          return invalidArgument("sim: an elephant crosses link " + std::to_string(l) + ", which the fabric (" +
                                 std::to_string(fabric_.links().size()) + " links) does not have or it crosses twice");
      net_.start(e.links, FlowNetwork::kForever, kElephant);
    }
    result_.rankFinish.assign(static_cast<size_t>(n), 0);
    result_.spineFlows.assign(static_cast<size_t>(fabric_.spec().spines), 0);
    MYR_TRY(index());
    busy_.assign(static_cast<size_t>(n), 0);
    state_.assign(static_cast<size_t>(n), Window<int32_t>(kUntouched));
    for (int r = 0; r < n; ++r)
      for (int32_t i : p_.shape(r).roots) {
        state_[static_cast<size_t>(r)].at(static_cast<uint64_t>(i)) = 0;
        post(r, i);
      }
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
    for (const Window<int32_t>& w : state_) result_.stepWindow = std::max(result_.stepWindow, w.capacity());
    for (const Channel& c : channels_) result_.messageWindow = std::max(result_.messageWindow, c.msgs.capacity());
    result_.linkBytes = net_.carried();
    const FlowNetwork::Stats& st = net_.stats();
    result_.rerates = st.rerates, result_.rerateRounds = st.rerateRounds, result_.rerateFlows = st.rerateFlows;
    result_.rerateLinks = st.rerateLinks;
    return std::move(result_);
  }

 private:
  static std::vector<double> capacities(const Fabric& f) {
    std::vector<double> c;
    for (const Link& l : f.links()) c.push_back(l.capacity);
    return c;
  }

  // One channel per direction of every rank pair that exchanges messages; each rank's slots point at the
  // channels they send on and receive from.
  Status index() {
    const int n = p_.nranks();
    outOf_.assign(p_.totalSlots(), -1), inOf_.assign(p_.totalSlots(), -1);
    std::unordered_map<uint64_t, int> channelOf;
    auto channel = [&](int src, int dst) -> Channel& {
      uint64_t key = uint64_t(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst);
      auto [it, fresh] = channelOf.try_emplace(key, static_cast<int>(channels_.size()));
      if (fresh) {
        channels_.emplace_back();
        channels_.back().src = src, channels_.back().dst = dst;
      }
      return channels_[static_cast<size_t>(it->second)];
    };
    std::vector<size_t> recvs;  // per channel: the receives its destination posts
    for (int r = 0; r < n; ++r) {
      const PlanShape& s = p_.shape(r);
      if (trace_) postedAt_.emplace_back(s.size(), 0.0);
      left_ += s.size();
      for (uint32_t k = 0; k < p_.slots(r); ++k) {
        const int peer = p_.peer(r, k);
        const size_t slot = p_.slotIndex(r, k);
        if (!s.sendsTo[k].empty()) {
          Channel& c = channel(r, peer);
          c.srcSlot = k, c.count = s.sendsTo[k].size();
          outOf_[slot] = static_cast<int>(&c - channels_.data());
        }
        if (!s.recvsFrom[k].empty()) {
          Channel& c = channel(peer, r);
          c.dstSlot = k;
          inOf_[slot] = static_cast<int>(&c - channels_.data());
          recvs.resize(channels_.size(), 0);
          recvs[static_cast<size_t>(inOf_[slot])] = s.recvsFrom[k].size();
        }
      }
    }
    recvs.resize(channels_.size(), 0);
    for (size_t id = 0; id < channels_.size(); ++id) {
      const Channel& c = channels_[id];
      if (c.count != recvs[id])
        return internalError("sim: rank " + std::to_string(c.src) + " sends " + std::to_string(c.count) +
                             " messages to rank " + std::to_string(c.dst) + ", which receives " +
                             std::to_string(recvs[id]));
    }
    return Status::ok();
  }

  int sendStep(const Channel& c, size_t k) const { return p_.shape(c.src).sendsTo[c.srcSlot][k]; }
  int recvStep(const Channel& c, size_t k) const { return p_.shape(c.dst).recvsFrom[c.dstSlot][k]; }
  double messageBytes(const Channel& c, size_t k) const {
    return static_cast<double>(p_.shape(c.src).bytes[static_cast<size_t>(sendStep(c, k))]);
  }

  void post(int r, int i) {
    const PlanShape& s = p_.shape(r);
    const size_t si = static_cast<size_t>(i);
    if (trace_) postedAt_[static_cast<size_t>(r)][si] = now_;
    switch (s.kind[si]) {
      case Kind::kSend:
      case Kind::kRecv:
      case Kind::kRecvReduce: {
        const bool sends = s.kind[si] == Kind::kSend;
        const size_t slot = p_.slotIndex(r, s.slot[si]);
        const int id = sends ? outOf_[slot] : inOf_[slot];
        Channel& c = channels_[static_cast<size_t>(id)];
        const size_t k = s.ordinal[si];
        markPosted(c, k, sends);
        if (const MessageState* m = c.msgs.find(k); !sends && m && m->arrived >= 0)
          received(c, k, std::max(now_, m->arrived));  // its bytes came ahead
        startReady(id);
        break;
      }
      case Kind::kJoin: complete(r, i); break;
      default: compute(r, i, s.touched(si)); break;
    }
  }

  // Whether message k's send (receive) is posted: below the channel's posted prefix, read already (which
  // takes both), or marked when posted out of order.
  static bool posted(const Channel& c, size_t k, bool sends) {
    if (k < (sends ? c.sendsPosted : c.recvsPosted) || k < c.msgs.base()) return true;
    const MessageState* m = c.msgs.find(k);
    return m && (sends ? m->sendPosted : m->recvPosted);
  }
  static void markPosted(Channel& c, size_t k, bool sends) {
    size_t& prefix = sends ? c.sendsPosted : c.recvsPosted;
    prefix = std::max<size_t>(prefix, c.msgs.base());
    if (k != prefix) {
      MessageState& m = c.msgs.at(k);
      (sends ? m.sendPosted : m.recvPosted) = true;
      return;
    }
    for (++prefix; prefix < c.count && posted(c, prefix, sends);) ++prefix;
  }

  void compute(int r, int i, double bytes) {
    double& busy = busy_[static_cast<size_t>(r)];
    busy = std::max(busy, now_) + bytes / fabric_.spec().memBytesPerSec;
    events_.push({busy, seq_++, r, i});
  }

  // A flow's tag: its channel (whose message on the wire it carries) and which of the parts (paths) it is.
  static constexpr uint64_t kParts = 64;
  static uint64_t flowTag(uint64_t channel, int part) { return channel * kParts + static_cast<uint64_t>(part); }

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
          const Channel& c = channels_[tag / kParts];
          Route route = fabric_.route(c.src, c.dst, c.paths->port(static_cast<int>(tag % kParts)));
          if (fabric_.crossesDead(route))
            ++stranded_;
          else
            net_.start(route.links, left, tag);
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
    while (c.written < c.count) {
      const size_t k = c.written;
      if (!posted(c, k, true)) break;
      const double bytes = messageBytes(c, k);
      if (c.backlog + bytes <= eagerBytes_) {
        c.backlog += bytes;
        c.msgs.at(k).buffered = true;
        events_.push({now_, seq_++, c.src, sendStep(c, k)});
      } else if (!posted(c, k, false) || c.backlog > 0) {
        break;
      }
      ++c.written;
    }
    while (!c.onWire && c.next < c.written) {
      const size_t k = c.next++;
      const double bytes = messageBytes(c, k);
      const int parts = fabric_.hostOf(c.src) == fabric_.hostOf(c.dst) ? 1 : paths_;
      if (!c.paths) c.paths.emplace(fabric_.spec().seed, c.src, c.dst, parts, policy_, now_);
      c.wire = k, c.partsLeft = parts, c.latency = 0, c.start = now_;
      c.paths->split(bytes);
      ++result_.messages;
      for (int p = 0; p < parts; ++p) {
        Route route = fabric_.route(c.src, c.dst, c.paths->port(p));
        c.latency = std::max(c.latency, route.latency);
        if (route.spine >= 0) ++result_.spineFlows[static_cast<size_t>(route.spine)];
        ++result_.flows;
        if (bytes == 0) continue;
        if (fabric_.crossesDead(route)) {  // no live path: this part never arrives
          ++stranded_;
          continue;
        }
        net_.start(route.links, c.paths->part(p), flowTag(static_cast<uint64_t>(id), p));
      }
      if (bytes == 0) c.partsLeft = 0;
      if (c.partsLeft == 0) {
        deliver(c);
      } else {
        c.onWire = true;
      }
    }
  }

  void flowDone(uint64_t flow) {
    if (flow == kElephant) return;
    const int id = static_cast<int>(flow / kParts);
    Channel& c = channels_[static_cast<size_t>(id)];
    // The policy's sample: this part's service time (adaptive: may re-path one of the pair's paths).
    if (c.paths->served(static_cast<int>(flow % kParts), now_ - c.start, now_)) ++result_.repaths;
    if (--c.partsLeft > 0) return;
    c.onWire = false;
    deliver(c);
    startReady(id);
  }

  // The channel's message on the wire has left it: it arrives one path latency later.
  void deliver(Channel& c) {
    const size_t k = c.wire;
    MessageState& m = c.msgs.at(k);
    const double at = now_ + c.latency;
    if (!m.buffered) events_.push({at, seq_++, c.src, sendStep(c, k)});
    m.arrived = at;
    // A message whose receive is not posted yet waits in the buffers for it (post()).
    if (posted(c, k, false)) received(c, k, at);
  }

  // Message k of channel c is read by its receive at `at`: the receive is done then, or once reduced, and its
  // bytes leave the socket buffers.
  void received(Channel& c, size_t k, double at) {
    MessageState& m = c.msgs.at(k);
    if (m.buffered) c.backlog -= messageBytes(c, k);
    m.read = true;
    const int r = c.dst, recv = recvStep(c, k);
    const PlanShape& s = p_.shape(r);
    if (s.kind[static_cast<size_t>(recv)] == Kind::kRecvReduce) {
      double& busy = busy_[static_cast<size_t>(r)];
      busy = std::max(busy, at) + s.touched(static_cast<size_t>(recv)) / fabric_.spec().memBytesPerSec;
      events_.push({busy, seq_++, r, recv});
    } else {
      events_.push({at, seq_++, r, recv});
    }
    while (!c.msgs.empty() && c.msgs.front().read) c.msgs.popFront();
  }

  void complete(int r, int i) {
    Window<int32_t>& w = state_[static_cast<size_t>(r)];
    if (static_cast<uint64_t>(i) < w.base()) return;
    int32_t& d = w.at(static_cast<uint64_t>(i));
    if (d == kDone) return;
    d = kDone, --left_;
    result_.rankFinish[static_cast<size_t>(r)] = std::max(result_.rankFinish[static_cast<size_t>(r)], now_);
    if (trace_) result_.steps.push_back({r, i, postedAt_[static_cast<size_t>(r)][static_cast<size_t>(i)], now_});
    const PlanShape& s = p_.shape(r);
    for (uint32_t k = s.afterAt[static_cast<size_t>(i)]; k < s.afterAt[static_cast<size_t>(i) + 1]; ++k) {
      const int j = s.after[k];
      int32_t& waits = w.at(static_cast<uint64_t>(j));
      if (waits == kUntouched) waits = static_cast<int32_t>(s.numDeps[static_cast<size_t>(j)]);
      if (--waits == 0) post(r, j);
    }
    while (!w.empty() && w.front() == kDone) w.popFront();
  }

  std::string deadlock() const {
    std::string o = "sim: deadlock at " + std::to_string(now_ * 1e6) + " us: no flow or step can finish;";
    if (stranded_ > 0)
      o += " " + std::to_string(stranded_) + " flows found no live path after a link failure (no spine left " +
           "between their leaves);";
    int shown = 0;
    for (size_t r = 0; r < state_.size() && shown < 8; ++r) {
      const Window<int32_t>& w = state_[r];
      for (uint64_t i = w.base(); i < w.base() + w.span(); ++i)
        if (*w.find(i) == 0) {
          o += "\n  rank " + std::to_string(r) + " waits in step " + std::to_string(i);
          ++shown;
          break;
        }
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
  const PlanSet& p_;
  FlowNetwork net_;
  RunResult result_;
  double now_ = 0;
  uint64_t seq_ = 0;
  uint64_t left_ = 0;
  std::vector<Window<int32_t>> state_;  // per rank: its steps' state from the first one not finished
  std::vector<int> outOf_,
      inOf_;  // per slot of every rank (PlanSet::slotIndex): the channel it sends on, receives from
  std::vector<double> busy_;
  bool trace_ = false;
  std::vector<std::vector<double>> postedAt_;  // trace_: when each step was posted
  std::vector<Channel> channels_;
  std::vector<Scenario> pending_;
  uint64_t stranded_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

}  // namespace

VirtualExecutor::VirtualExecutor(const Fabric& fabric, int paths, std::vector<Elephant> elephants)
    : fabric_(fabric), paths_(std::clamp(paths, 1, 64)), elephants_(std::move(elephants)) {}

Result<RunResult> VirtualExecutor::run(const PlanSet& plans) const {
  Run r(fabric_, paths_, policy_, eagerBytes_, plans, trace_, failures_);
  return r.go(elephants_);
}

Result<RunResult> VirtualExecutor::run(const std::vector<Schedule>& schedules) const {
  MYR_ASSIGN_OR_RETURN(PlanSet plans, PlanSet::of(schedules));
  return run(plans);
}

}  // namespace myriad::netsim
