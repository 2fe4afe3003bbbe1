// Parsing and analysis of flight-record dumps. nlohmann-json throws on bad input and wrong types; the
// checked readers below turn both, and every out-of-range value, into one error message per file. The
// analysis trusts nothing it did not check: ranks index maps, not arrays sized by a number from a file.
#include "tools/trace/trace_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

namespace myriad::trace {
namespace {

using nlohmann::json;

constexpr long long kMaxRanks = 1 << 24;

struct Malformed {
  std::string what;
};

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object()) throw Malformed{where + " is not an object"};
  auto it = j.find(key);
  if (it == j.end()) throw Malformed{where + " has no \"" + key + "\""};
  return *it;
}

std::string str(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_string()) throw Malformed{where + "." + key + " is not a string"};
  return v.get<std::string>();
}

long long integer(const json& j, const char* key, const std::string& where, long long lo, long long hi) {
  const json& v = member(j, key, where);
  long long x = 0;
  if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(hi))
    x = static_cast<long long>(v.get<uint64_t>());
  else if (v.is_number_integer() && !v.is_number_unsigned())
    x = v.get<int64_t>();
  else
    throw Malformed{where + "." + key + " is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "]"};
  if (x < lo || x > hi)
    throw Malformed{where + "." + key + " = " + std::to_string(x) + " is not in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]"};
  return x;
}

uint64_t count(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    throw Malformed{where + "." + key + " is not a non-negative integer"};
  return v.get<uint64_t>();
}

std::optional<double> millis(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number() || !std::isfinite(v.get<double>())) throw Malformed{where + "." + key + " is not a number"};
  return v.get<double>();
}

bool boolean(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_boolean()) throw Malformed{where + "." + key + " is not true or false"};
  return v.get<bool>();
}

// A rank field: null or absent is -1.
int optionalRank(const json& j, const char* key, const std::string& where, int nranks) {
  if (!j.contains(key) || j.at(key).is_null()) return -1;
  return static_cast<int>(integer(j, key, where, 0, nranks - 1));
}

Call parseCall(const json& c, const std::string& where, int nranks) {
  Call out;
  out.seq = count(c, "seq", where);
  out.op = str(c, "op", where);
  out.count = count(c, "count", where);
  out.dtype = str(c, "dtype", where);
  out.redop = str(c, "redop", where);
  out.root = static_cast<int>(integer(c, "root", where, -1, nranks - 1));
  out.algorithm = str(c, "algorithm", where);
  out.path = str(c, "path", where);
  out.startMs = millis(c, "start_ms", where).value_or(0);
  out.endMs = millis(c, "end_ms", where);
  out.status = str(c, "status", where);
  if (c.contains("error")) out.error = str(c, "error", where);
  out.waitedOn = optionalRank(c, "waited_on", where, nranks);
  if (out.waitedOn >= 0) out.waitedMs = integer(c, "waited_ms", where, -(1LL << 50), 1LL << 50);
  const json& peers = member(c, "peers", where);
  if (!peers.is_array()) throw Malformed{where + ".peers is not an array"};
  for (size_t i = 0; i < peers.size(); ++i) {
    const std::string w = where + ".peers[" + std::to_string(i) + "]";
    out.peers.push_back(PeerTraffic{static_cast<int>(integer(peers[i], "rank", w, 0, nranks - 1)),
                                    count(peers[i], "send_bytes", w), count(peers[i], "recv_bytes", w)});
  }
  return out;
}

Dump parse(const json& j, const std::string& source) {
  const std::string w = "the document";
  if (str(j, "format", w) != "myriad-flight-record") throw Malformed{"not a myriad flight record (\"format\")"};
  if (integer(j, "version", w, 0, 1LL << 30) != 1)
    throw Malformed{"a flight record of a version this tool does not know"};
  Dump d;
  d.source = source;
  d.nranks = static_cast<int>(integer(j, "nranks", w, 1, kMaxRanks));
  d.rank = static_cast<int>(integer(j, "rank", w, 0, d.nranks - 1));
  d.host = str(j, "host", w);
  d.pid = integer(j, "pid", w, 0, 1LL << 40);
  d.comm = str(j, "comm", w);
  d.reason = str(j, "reason", w);
  d.dumpMs = millis(j, "dump_ms", w).value_or(0);
  d.dumpWall = str(j, "dump_wall", w);
  const json& st = member(j, "state", w);
  d.seq = count(st, "seq", "state");
  d.inCall = boolean(st, "in_call", "state");
  d.op = str(st, "op", "state");
  d.count = count(st, "count", "state");
  d.dtype = str(st, "dtype", "state");
  d.enteredMs = millis(st, "entered_ms", "state");
  d.finishedMs = millis(st, "finished_ms", "state");
  d.waitsOn = optionalRank(st, "waits_on", "state", d.nranks);
  if (d.waitsOn >= 0) d.silentMs = integer(st, "silent_ms", "state", -(1LL << 50), 1LL << 50);
  const json& err = member(j, "error", w);
  if (!err.is_null()) d.error = str(err, "code", "error") + ": " + str(err, "message", "error");
  const json& calls = member(j, "calls", w);
  if (!calls.is_array()) throw Malformed{"calls is not an array"};
  for (size_t i = 0; i < calls.size(); ++i)
    d.calls.push_back(parseCall(calls[i], "calls[" + std::to_string(i) + "]", d.nranks));
  return d;
}

std::string seconds(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000.0);
  return buf;
}

std::string who(const Dump& d) {
  return "rank " + std::to_string(d.rank) + " (" + d.host + " pid " + std::to_string(d.pid) + ")";
}

std::string callName(const std::string& op, uint64_t seq) {
  return op + " #" + std::to_string(seq);
}

bool failedStatus(const std::string& s) {
  return s != "ok" && s != "open";
}

// Whom a rank waits on: in a call, its current wait; after a failed call, the last wait that call noted.
int waitOf(const Dump& d, long long* ms) {
  if (d.inCall && d.waitsOn >= 0) return *ms = d.silentMs, d.waitsOn;
  const Call* c = d.call(d.seq);
  if (!d.inCall && c && failedStatus(c->status) && c->waitedOn >= 0) return *ms = c->waitedMs, c->waitedOn;
  return -1;
}

std::string stateLine(const Dump& d) {
  std::string line = who(d) + ": ";
  if (d.seq == 0) return line + "has entered no call";
  const Call* c = d.call(d.seq);
  std::string what = callName(d.op, d.seq) + " (" + std::to_string(d.count) + " " + d.dtype +
                     (c && !c->algorithm.empty() ? ", " + c->algorithm : "") + ")";
  const double ago = d.enteredMs ? d.dumpMs - *d.enteredMs : 0;
  if (d.inCall)
    line += "in " + what + " for " + seconds(ago);
  else if (c && failedStatus(c->status))
    line += "failed in " + what + ": " + (c->error.empty() ? c->status : c->error);
  else
    line += "last entered " + what + ", finished " + seconds(d.finishedMs ? d.dumpMs - *d.finishedMs : 0) +
            " before its dump";
  long long ms = 0;
  int peer = waitOf(d, &ms);
  if (peer >= 0)
    line += "; waits on rank " + std::to_string(peer) + " (silent " + seconds(static_cast<double>(ms)) + ")";
  return line;
}

// "rank 3", "ranks 0, 2, 5" (the first 16, then how many more).
std::string rankList(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += " and " + std::to_string(ranks.size() - 16) + " more";
  return out;
}

// Calls that more than one rank recorded under one number must be the same collective.
std::vector<std::string> mismatches(const std::map<int, const Dump*>& byRank) {
  std::map<uint64_t, std::pair<int, const Call*>> first;
  std::vector<std::string> out;
  for (const auto& [rank, d] : byRank)
    for (const Call& c : d->calls) {
      if (c.op == "send" || c.op == "recv" || c.op == "sendrecv") continue;  // point-to-point differs by design
      auto [it, fresh] = first.try_emplace(c.seq, rank, &c);
      if (fresh || it->second.second->op == c.op) continue;
      if (out.size() < 10)
        out.push_back("call #" + std::to_string(c.seq) + " is " + it->second.second->op + " on rank " +
                      std::to_string(it->second.first) + " but " + c.op + " on rank " + std::to_string(rank) +
                      ": the ranks issued their calls in different orders");
    }
  return out;
}

}  // namespace

const Call* Dump::call(uint64_t s) const {
  for (const Call& c : calls)
    if (c.seq == s) return &c;
  return nullptr;
}

std::optional<Dump> parseDump(const std::string& text, const std::string& source, std::string* error) {
  try {
    return parse(json::parse(text), source);
  } catch (const Malformed& m) {
    *error = m.what;
  } catch (const json::exception& e) {
    *error = std::string("not valid JSON: ") + e.what();
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return std::nullopt;
}

Analysis analyse(const std::vector<Dump>& dumps) {
  Analysis a;
  std::string& out = a.text;
  const int nranks = dumps.front().nranks;
  std::map<int, const Dump*> byRank;
  for (const Dump& d : dumps) {
    if (d.nranks != nranks) {
      out += "warning: " + d.source + " says " + std::to_string(d.nranks) + " ranks, " + dumps.front().source +
             " says " + std::to_string(nranks) + "; ignored\n";
      continue;
    }
    auto [it, fresh] = byRank.emplace(d.rank, &d);
    if (!fresh)
      out += "warning: two dumps of rank " + std::to_string(d.rank) + ": " + it->second->source + " and " + d.source +
             "; using the first\n";
  }
  out += "communicator " + dumps.front().comm + ": " + std::to_string(nranks) + " ranks, dumps from " +
         std::to_string(byRank.size()) + "\n\n";
  uint64_t stuck = 0;
  for (const auto& [rank, d] : byRank) stuck = std::max(stuck, d->seq);
  for (const auto& [rank, d] : byRank) {
    out += stateLine(*d) + "\n";
    if (d->error && d->inCall) out += "  its communicator failed: " + *d->error + "\n";
  }
  std::vector<int> missing;
  for (int r = 0, shown = 0; r < nranks; ++r) {
    if (byRank.count(r)) continue;
    missing.push_back(r);
    if (shown++ < 20) out += "rank " + std::to_string(r) + ": no dump (dead, or the dump did not reach here)\n";
  }
  if (missing.size() > 20) out += "... and " + std::to_string(missing.size() - 20) + " more ranks without a dump\n";
  for (const std::string& m : mismatches(byRank)) out += "warning: " + m + "\n";

  // The wait-for graph: each rank waits on at most one other. Follow every chain to its end.
  std::map<int, int> waitsOn;
  for (const auto& [rank, d] : byRank) {
    long long ms = 0;
    int peer = waitOf(*d, &ms);
    if (peer >= 0) waitsOn[rank] = peer;
  }
  std::map<int, int> endsAt;  // chain end -> ranks whose chain ends there
  std::set<int> cycleEnds;
  std::string longestChain;
  size_t longestLen = 0;
  for (const auto& [start, next] : waitsOn) {
    std::vector<int> chain{start};
    std::set<int> seen{start};
    int at = start;
    bool cycle = false;
    while (waitsOn.count(at)) {
      at = waitsOn[at];
      chain.push_back(at);
      if (!seen.insert(at).second) {
        cycle = true;
        break;
      }
    }
    ++endsAt[at];
    if (cycle) cycleEnds.insert(at);
    if (chain.size() > longestLen) {
      longestLen = chain.size();
      longestChain.clear();
      for (size_t i = 0; i < chain.size(); ++i) longestChain += (i ? " -> rank " : "rank ") + std::to_string(chain[i]);
      if (cycle) longestChain += " (a cycle)";
    }
  }
  out += "\n";
  if (stuck > 0) {
    std::vector<int> in, notIn;
    for (const auto& [rank, d] : byRank) (d->seq == stuck ? in : notIn).push_back(rank);
    out += "latest call: #" + std::to_string(stuck) + "; entered by " + rankList(in) +
           (notIn.empty() ? "" : "; not entered by " + rankList(notIn)) + "\n";
  }
  if (!longestChain.empty()) out += "wait-for chain: " + longestChain + "\n";

  // Candidates, most telling first: the ends of the wait-for chains (the one most ranks wait on first),
  // then ranks that have not entered the latest call (the furthest behind first), then missing ranks.
  std::vector<int> order;
  std::vector<std::pair<int, int>> ends(endsAt.begin(), endsAt.end());
  std::stable_sort(ends.begin(), ends.end(), [](auto& x, auto& y) { return x.second > y.second; });
  for (auto& e : ends) order.push_back(e.first);
  std::vector<const Dump*> behind;
  for (const auto& [rank, d] : byRank)
    if (d->seq < stuck) behind.push_back(d);
  std::stable_sort(behind.begin(), behind.end(), [](const Dump* x, const Dump* y) { return x->seq < y->seq; });
  for (const Dump* d : behind) order.push_back(d->rank);
  for (int r : missing) order.push_back(r);
  for (int r : order) {
    auto it = byRank.find(r);
    const Dump* d = it == byRank.end() ? nullptr : it->second;
    std::string reason;
    if (!d) {
      reason = "no dump from rank " + std::to_string(r) + ": dead or not reached";
    } else if (cycleEnds.count(r)) {
      reason = who(*d) + " is in a wait-for cycle: the ranks wait on each other (calls issued in different orders?)";
    } else if (d->seq < stuck) {
      reason = who(*d) + ": late / not entered: has not entered call #" + std::to_string(stuck) + "; last entered " +
               callName(d->op, d->seq) + (d->inCall ? " and is still in it" : "");
    } else if (d->inCall || (d->call(d->seq) && failedStatus(d->call(d->seq)->status))) {
      if (endsAt.count(r) == 0) continue;  // in the call and waiting on nobody, but nobody waits on it either
      reason = who(*d) + ": in " + callName(d->op, d->seq) +
               " but waits on nobody it names: stuck inside the call (or its wait was not noted yet)";
    } else {
      if (endsAt.count(r) == 0) continue;
      reason = who(*d) + ": finished " + callName(d->op, d->seq) + ", yet others wait on it there";
    }
    a.firstCulprit = r;
    a.culpritReason = reason;
    break;
  }
  if (a.firstCulprit < 0)
    out += "first culprit: none: no rank waits on another, and every rank with a dump entered the latest call\n";
  else
    out += "first culprit: " + a.culpritReason + "\n";
  return a;
}

}  // namespace myriad::trace
