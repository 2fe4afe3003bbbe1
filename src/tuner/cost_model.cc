// predict(): a discrete-event walk over the union of every rank's step DAG.
//
// Each step becomes ready when the steps it depends on are done and, for a receive, when the matching send
// (the k-th send from the peer to this rank meets this rank's k-th receive from the peer: the Schedule's
// ordering contract) has been posted. Ready steps are taken in order of their ready time, so the resources
// below are handed out first come, first served, as the executors would:
//   send         waits for the rank's egress and holds it for o + bytes·β of the link class (LogGP's overhead
//                and gap: the CPU time a message costs its sender and its bytes on the wire); the data
//                arrives α (the latency) later, which overlaps whatever the sender does next. On CPU-driven
//                transports sharing cores, o is what makes many small messages dear (why node-aggregated
//                all-to-all wins small blocks) and α what makes long chains of dependent steps dear.
//   recv         done when the data has arrived and the rank's ingress has taken it in: bytes·β after its
//                previous receive (so n messages into one rank cost n times the bytes, not one), then o.
//   recv-reduce  a receive, then a reduction of the elements on the rank's CPU.
//   reduce/scale on the rank's CPU at reduceGbps; copy at copyGbps.
//   join         nothing.
// A longest path over the DAG alone would let one rank send n-1 messages at once at full speed each; the
// egress/ingress queues are what make pairwise exchanges and gathers cost their bytes. β and α are those of
// the message's link class; a rank's links of different classes share one egress and one ingress queue (a
// rank's copies are what move data on shm and the kernel's on tcp: on the CPUs this model was fitted on
// these do not overlap). The predicted time is when the last step of any rank is done.
//
// Ranks that outnumber their machine's cores (emulated hosts, or more processes than CPUs) cannot all run at
// once, which the per-rank queues do not see: there the call takes at least the CPU time its ranks on that
// machine spend, all together (each message's overhead at both ends, the reductions, the copies), divided by
// its cores. The wire time β stays out of that sum: on the machines measured it overlaps other ranks' work
// (the fit that included it was worse, docs/design/tuning.md).
#include "tuner/cost_model.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

#include "plan/dtype.h"

namespace myriad {

LinkClass linkBetween(const CommView& view, int a, int b) {
  if (view.hostOf(a) == view.hostOf(b)) return view.hostShm ? LinkClass::kShm : LinkClass::kTcp;
  return view.netRdma ? LinkClass::kRdma : LinkClass::kTcp;
}

namespace {

// The longest any oversubscribed machine needs for its ranks' CPU time `work` (by rank) on its cores; 0
// where every machine has cores enough, or its size is unknown.
double cpuBound(const CommView& view, const std::vector<double>& work) {
  const HostLayout& l = *view.layout;
  std::vector<double> sum(static_cast<size_t>(l.machines()), 0);
  std::vector<int> ranks(sum.size(), 0);
  for (int r = 0; r < l.nranks(); ++r) {
    const auto m = static_cast<size_t>(l.machineOfHost(l.hostOf[static_cast<size_t>(r)]));
    sum[m] += work[static_cast<size_t>(r)];
    ++ranks[m];
  }
  double bound = 0;
  for (size_t m = 0; m < sum.size(); ++m) {
    const int cores = l.coresOf(static_cast<int>(m));
    if (cores > 0 && ranks[m] > cores) bound = std::max(bound, sum[m] / cores);
  }
  return bound;
}

struct Node {
  int pending = 0;      // unfinished predecessors: deps, and the matching send for a receive
  double ready = 0;     // latest finish of the predecessors so far
  double arrival = 0;   // receives: when the data is at this rank
  int64_t sender = -1;  // receives: the global index of the matching send
};

}  // namespace

Prediction predict(const std::vector<Schedule>& schedules, const CommView& view, const TunerConstants& k) {
  Prediction out;
  int n = static_cast<int>(schedules.size());
  std::vector<size_t> base(static_cast<size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r)
    base[static_cast<size_t>(r) + 1] = base[static_cast<size_t>(r)] + schedules[static_cast<size_t>(r)].size();
  size_t total = base.back();
  std::vector<Node> nodes(total);
  std::vector<int64_t> receiver(total, -1);  // sends: the global index of the matching receive
  auto id = [&](int r, size_t s) { return base[static_cast<size_t>(r)] + s; };

  // Dependents of each step, compressed: next[first[g] .. first[g + 1]).
  std::vector<size_t> first(total + 1, 0), next;
  for (int r = 0; r < n; ++r) {
    const Schedule& s = schedules[static_cast<size_t>(r)];
    for (size_t i = 0; i < s.size(); ++i)
      for (Schedule::Step d : s.deps(static_cast<Schedule::Step>(i))) ++first[id(r, static_cast<size_t>(d)) + 1];
  }
  for (size_t g = 0; g < total; ++g) first[g + 1] += first[g];
  next.resize(first[total]);
  std::vector<size_t> fill(first.begin(), first.end() - 1);

  // Match messages: the k-th send r->p with the k-th receive at p from r.
  std::map<std::pair<int, int>, std::vector<size_t>> sends, recvs;  // (from, to) -> global ids in order
  for (int r = 0; r < n; ++r) {
    const Schedule& s = schedules[static_cast<size_t>(r)];
    for (size_t i = 0; i < s.size(); ++i) {
      const Schedule::StepInfo& st = s.steps()[i];
      for (Schedule::Step d : s.deps(static_cast<Schedule::Step>(i))) {
        next[fill[id(r, static_cast<size_t>(d))]++] = id(r, i);
        ++nodes[id(r, i)].pending;
      }
      if (st.kind == Schedule::Kind::kSend) sends[{r, st.peer}].push_back(id(r, i));
      if (st.kind == Schedule::Kind::kRecv || st.kind == Schedule::Kind::kRecvReduce)
        recvs[{st.peer, r}].push_back(id(r, i));
    }
  }
  for (auto& [pair, rs] : recvs) {
    auto it = sends.find(pair);
    size_t matched = it == sends.end() ? 0 : std::min(rs.size(), it->second.size());
    for (size_t j = 0; j < matched; ++j) {
      receiver[it->second[j]] = static_cast<int64_t>(rs[j]);
      nodes[rs[j]].sender = static_cast<int64_t>(it->second[j]);
      ++nodes[rs[j]].pending;
    }
  }
  sends.clear();
  recvs.clear();

  std::vector<double> egress(static_cast<size_t>(n), 0), ingress(static_cast<size_t>(n), 0),
      cpu(static_cast<size_t>(n), 0), work(static_cast<size_t>(n), 0);
  using Item = std::tuple<double, size_t, int>;  // ready time, global id, rank
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < schedules[static_cast<size_t>(r)].size(); ++i)
      if (nodes[id(r, i)].pending == 0) ready.emplace(0.0, id(r, i), r);
  double end = 0;
  while (!ready.empty()) {
    // Plain copies, not structured bindings: the lambda below captures `t`, which clang 14 refuses for a binding.
    double t = std::get<0>(ready.top());
    const size_t g = std::get<1>(ready.top());
    const int r = std::get<2>(ready.top());
    ready.pop();
    const Schedule::StepInfo& st = schedules[static_cast<size_t>(r)].steps()[g - base[static_cast<size_t>(r)]];
    auto ri = static_cast<size_t>(r);
    double done = t;
    auto compute = [&](size_t bytes, double gbps) {
      double start = std::max(t, cpu[ri]);
      const double us = static_cast<double>(bytes) / (gbps * 1e3);
      cpu[ri] = start + us;
      work[ri] += us;
      return cpu[ri];
    };
    switch (st.kind) {
      case Schedule::Kind::kSend: {
        LinkClass c = linkBetween(view, r, st.peer);
        const LinkCost& l = k.link(c);
        double start = std::max(t, egress[ri]);
        egress[ri] = start + l.overheadUs + l.wireUs(st.n);
        work[ri] += l.overheadUs;
        done = egress[ri];
        if (receiver[g] >= 0) nodes[static_cast<size_t>(receiver[g])].arrival = done + l.alphaUs;
        out.bytes[static_cast<size_t>(c)] += st.n;
        out.messages[static_cast<size_t>(c)] += 1;
        break;
      }
      case Schedule::Kind::kRecv:
      case Schedule::Kind::kRecvReduce: {
        const LinkCost& l = k.link(linkBetween(view, st.peer, r));
        done = std::max(t, ingress[ri] + l.wireUs(st.n)) + l.overheadUs;
        work[ri] += l.overheadUs;
        ingress[ri] = done;
        if (st.kind == Schedule::Kind::kRecvReduce) {
          t = done;
          done = compute(st.n, k.reduceGbps);
        }
        break;
      }
      case Schedule::Kind::kReduce:
      case Schedule::Kind::kScale: done = compute(st.n * dtypeSize(st.dtype), k.reduceGbps); break;
      case Schedule::Kind::kCopy: done = compute(st.n, k.copyGbps); break;
      case Schedule::Kind::kJoin: break;
    }
    end = std::max(end, done);
    auto release = [&](size_t d) {
      Node& nd = nodes[d];
      nd.ready = std::max(nd.ready, done);
      if (--nd.pending == 0) {
        int dr = static_cast<int>(std::upper_bound(base.begin(), base.end(), d) - base.begin()) - 1;
        ready.emplace(std::max(nd.ready, nd.arrival), d, dr);
      }
    };
    for (size_t e = first[g]; e < first[g + 1]; ++e) release(next[e]);
    if (receiver[g] >= 0) release(static_cast<size_t>(receiver[g]));
  }
  out.cpuBoundUs = cpuBound(view, work);
  out.us = std::max(end, out.cpuBoundUs) + k.callUs;
  return out;
}

}  // namespace myriad
