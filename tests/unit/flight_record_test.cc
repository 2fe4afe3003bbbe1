// The flight recorder (ring wrap, call state, waits, planned bytes per peer), the JSON it is dumped as
// (escaping, every record through myriad-trace's parser and back), and myriad-trace's analysis and its
// refusal of malformed input.
#include "core/flight_record.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/flight_dump.h"
#include "plan/coll_args.h"
#include "plan/schedule.h"
#ifdef MYRIAD_HAVE_TRACE_REPORT
#include "tools/trace/trace_report.h"
#endif

namespace myriad {
namespace {

CollArgs allReduce(size_t count) {
  CollArgs a;
  a.kind = CollKind::kAllReduce;
  a.count = count;
  a.dtype = myrFloat32;
  return a;
}

TEST(FlightRecord, KeepsTheLastCallsOldestFirst) {
  FlightRecorder f(4, 3);
  for (int i = 1; i <= 10; ++i) {
    uint64_t seq = f.begin(allReduce(static_cast<size_t>(i)), "allreduce.ring", false);
    EXPECT_EQ(seq, static_cast<uint64_t>(i));
    f.end(seq, Status::ok());
  }
  FlightSnapshot s = f.snapshot();
  ASSERT_EQ(s.records.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.records[i].seq, 7 + i);
    EXPECT_EQ(s.records[i].count, 7 + i);
    EXPECT_FALSE(s.records[i].open);
    EXPECT_STREQ(s.records[i].op, "allreduce");
    EXPECT_STREQ(s.records[i].algorithm, "allreduce.ring");
  }
  EXPECT_EQ(s.state.seq, 10u);
  EXPECT_FALSE(s.state.inCall);
}

TEST(FlightRecord, StateCountsCallsWithTheRingOff) {
  FlightRecorder f(0, 2);
  EXPECT_EQ(f.state().seq, 0u);
  uint64_t seq = f.begin(allReduce(5), "allreduce.ring", false);
  CallState st = f.state();
  EXPECT_EQ(seq, 1u);
  EXPECT_TRUE(st.inCall);
  EXPECT_STREQ(st.op, "allreduce");
  EXPECT_EQ(st.count, 5u);
  EXPECT_EQ(st.dtype, myrFloat32);
  f.end(seq, Status(Code::kTimeout, "late"));
  st = f.state();
  EXPECT_FALSE(st.inCall);
  EXPECT_GE(st.finished, st.entered);
  EXPECT_EQ(f.begin(allReduce(1), "allreduce.ring", false), 2u);
  EXPECT_TRUE(f.snapshot().records.empty());
}

TEST(FlightRecord, NamesPointToPointCallsAndRoots) {
  FlightRecorder f(8, 4);
  CollArgs p2p;
  p2p.kind = CollKind::kSendRecv;
  p2p.p2p = {P2pCall{true, 1, nullptr, 8}};
  f.end(f.begin(p2p, "sendrecv.direct", false), Status::ok());
  p2p.p2p.push_back(P2pCall{false, 2, nullptr, 8});
  f.end(f.begin(p2p, "sendrecv.direct", false), Status::ok());
  CollArgs bcast = allReduce(3);
  bcast.kind = CollKind::kBroadcast;
  bcast.root = 2;
  f.end(f.begin(bcast, "broadcast.ring", true), Status::ok());
  auto recs = f.snapshot().records;
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_STREQ(recs[0].op, "send");
  EXPECT_STREQ(recs[1].op, "sendrecv");
  EXPECT_STREQ(recs[2].op, "broadcast");
  EXPECT_EQ(recs[2].root, 2);
  EXPECT_TRUE(recs[2].device);
  EXPECT_EQ(recs[0].root, -1);
}

TEST(FlightRecord, SumsPlannedBytesPerPeer) {
  FlightRecorder f(2, 4);
  Schedule s("test");
  s.send(1, Schedule::sendBuf(), 100);
  s.recv(3, Schedule::recvBuf(), 40);
  s.send(1, Schedule::sendBuf(), 20);
  s.recvReduce(1, Schedule::recvBuf(), Schedule::recvBuf(), Schedule::recvBuf(), 2, myrFloat32, myrSum);
  s.copy(Schedule::recvBuf(), Schedule::sendBuf(), 64);
  uint64_t seq = f.begin(allReduce(2), "x", false);
  f.planned(seq, s);
  f.end(seq, Status::ok());
  // The sums are reset for the next call.
  seq = f.begin(allReduce(2), "x", false);
  Schedule t("test");
  t.send(2, Schedule::sendBuf(), 0);
  f.planned(seq, t);
  auto recs = f.snapshot().records;
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_EQ(recs[0].peers.size(), 2u);
  EXPECT_EQ(recs[0].peers[0].peer, 1);
  EXPECT_EQ(recs[0].peers[0].sendBytes, 120u);
  EXPECT_EQ(recs[0].peers[0].recvBytes, 8u);
  EXPECT_EQ(recs[0].peers[1].peer, 3);
  EXPECT_EQ(recs[0].peers[1].recvBytes, 40u);
  ASSERT_EQ(recs[1].peers.size(), 1u);
  EXPECT_EQ(recs[1].peers[0].peer, 2);
  EXPECT_TRUE(recs[1].open);
}

TEST(FlightRecord, WaitsBelongToTheCurrentCall) {
  FlightRecorder f(4, 3);
  f.noteWait(2, 100);  // not in a call: ignored
  EXPECT_EQ(f.snapshot().wait.peer, -1);
  uint64_t seq = f.begin(allReduce(1), "x", false);
  f.noteWait(2, 1500);
  FlightSnapshot s = f.snapshot();
  EXPECT_EQ(s.wait.peer, 2);
  EXPECT_EQ(f.wait().peer, 2);
  EXPECT_GE(msSince(s.wait.since), 1500);
  f.clearWait();
  EXPECT_EQ(f.snapshot().wait.peer, -1);
  f.noteWait(1, 10);
  f.end(seq, Status(Code::kTimeout, "silence"));
  s = f.snapshot();
  EXPECT_EQ(s.wait.peer, -1);
  EXPECT_EQ(s.records[0].lastWait.peer, 1);  // the record keeps the last wait of a failed call
  EXPECT_EQ(s.records[0].code, Code::kTimeout);
  EXPECT_EQ(s.records[0].error, "silence");
}

TEST(FlightRecord, StateIsSafeToReadWhileCallsRun) {
  FlightRecorder f(16, 2);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    uint64_t last = 0;
    while (!stop.load()) {
      CallState st = f.state();
      EXPECT_GE(st.seq, last);
      last = st.seq;
      (void)f.snapshot();
    }
  });
  for (int i = 0; i < 20000; ++i) {
    uint64_t seq = f.begin(allReduce(1), "x", false);
    f.noteWait(1, 1);
    f.end(seq, Status::ok());
  }
  stop = true;
  reader.join();
  EXPECT_EQ(f.state().seq, 20000u);
}

TEST(FlightRecord, JsonEscaping) {
  EXPECT_EQ(jsonEscape("plain"), "plain");
  EXPECT_EQ(jsonEscape("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(jsonEscape("l1\nl2\t\x01\x1f\x7f"), "l1\\nl2\\t\\u0001\\u001f\\u007f");
  EXPECT_EQ(jsonEscape(std::string("nul\0x", 5)), "nul\\u0000x");
  EXPECT_EQ(jsonEscape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(jsonEscape("bad\xff"), "bad" + fffd);
  EXPECT_EQ(jsonEscape("cut\xe2\x82"), "cut" + fffd + fffd);
  EXPECT_EQ(jsonEscape("\xc0\xaf"), fffd + fffd);             // overlong '/'
  EXPECT_EQ(jsonEscape("\xed\xa0\x80"), fffd + fffd + fffd);  // a surrogate
}

#ifdef MYRIAD_HAVE_TRACE_REPORT

DumpHeader header(int rank, int nranks) {
  DumpHeader h;
  h.rank = rank;
  h.nranks = nranks;
  h.host = "node-\"a\"\n\xff";
  h.pid = 4000 + rank;
  h.comm = "tag";
  h.reason = "test";
  h.steadyNow = Clock::now();
  h.wallNow = std::chrono::system_clock::now();
  return h;
}

trace::Dump roundTrip(const DumpHeader& h, const FlightSnapshot& s) {
  std::string error;
  auto d = trace::parseDump(flightRecordJson(h, s), "mem", &error);
  EXPECT_TRUE(d.has_value()) << error << "\n" << flightRecordJson(h, s);
  return d ? *d : trace::Dump{};
}

TEST(FlightRecord, RoundTripThroughTheTraceParser) {
  FlightRecorder f(3, 3);
  for (int i = 0; i < 4; ++i) {
    uint64_t seq = f.begin(allReduce(8), "allreduce.ring", false);
    Schedule s("allreduce.ring");
    s.send(1, Schedule::sendBuf(), 32);
    s.recv(2, Schedule::recvBuf(), 32);
    f.planned(seq, s);
    f.end(seq, Status::ok());
  }
  uint64_t seq = f.begin(allReduce(8), "allreduce.ring", false);
  f.noteWait(2, 1200);
  DumpHeader h = header(1, 3);
  h.firstError = Status(Code::kTimeout, "rank 1: no data moved with rank 2 \"x\"");
  trace::Dump d = roundTrip(h, f.snapshot());
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.nranks, 3);
  EXPECT_EQ(d.host, "node-\"a\"\n\xef\xbf\xbd");
  EXPECT_EQ(d.pid, 4001);
  EXPECT_EQ(d.seq, seq);
  EXPECT_TRUE(d.inCall);
  EXPECT_EQ(d.op, "allreduce");
  EXPECT_EQ(d.dtype, "float");
  EXPECT_EQ(d.waitsOn, 2);
  EXPECT_GE(d.silentMs, 1200);
  ASSERT_TRUE(d.error.has_value());
  EXPECT_EQ(*d.error, "timeout: rank 1: no data moved with rank 2 \"x\"");
  ASSERT_EQ(d.calls.size(), 3u);
  EXPECT_EQ(d.calls[0].seq, 3u);
  EXPECT_EQ(d.calls[0].status, "ok");
  EXPECT_EQ(d.calls[0].algorithm, "allreduce.ring");
  ASSERT_EQ(d.calls[0].peers.size(), 2u);
  EXPECT_EQ(d.calls[0].peers[0].rank, 1);
  EXPECT_EQ(d.calls[0].peers[0].sendBytes, 32u);
  EXPECT_EQ(d.calls[0].peers[1].recvBytes, 32u);
  EXPECT_TRUE(d.calls[0].endMs.has_value());
  EXPECT_EQ(d.calls[2].status, "open");
  EXPECT_FALSE(d.calls[2].endMs.has_value());
  EXPECT_EQ(d.calls[2].waitedOn, 2);
  // An empty record, before any call.
  FlightRecorder empty(0, 3);
  trace::Dump e = roundTrip(header(0, 3), empty.snapshot());
  EXPECT_EQ(e.seq, 0u);
  EXPECT_TRUE(e.calls.empty());
}

// Three ranks: two in call 4 waiting (2 -> 1 -> 0), rank 0 finished call 3 and never entered call 4.
std::vector<trace::Dump> hang(int late, int nranks) {
  std::vector<trace::Dump> dumps;
  for (int r = 0; r < nranks; ++r) {
    FlightRecorder f(8, nranks);
    int calls = r == late ? 3 : 4;
    for (int i = 1; i <= calls; ++i) {
      uint64_t seq = f.begin(allReduce(1), "allreduce.ring", false);
      if (i < 4) f.end(seq, Status::ok());
    }
    if (r != late) f.noteWait(r == (late + 1) % nranks ? late : (r + nranks - 1) % nranks, 900);
    dumps.push_back(roundTrip(header(r, nranks), f.snapshot()));
  }
  return dumps;
}

TEST(FlightRecord, TraceNamesTheRankThatDidNotEnter) {
  for (int late = 0; late < 3; ++late) {
    trace::Analysis a = trace::analyse(hang(late, 3));
    EXPECT_EQ(a.firstCulprit, late) << a.text;
    EXPECT_NE(a.text.find("late / not entered"), std::string::npos) << a.text;
    EXPECT_NE(a.text.find("first culprit: rank " + std::to_string(late) + " "), std::string::npos) << a.text;
  }
}

TEST(FlightRecord, TraceNamesARankWithoutADump) {
  auto dumps = hang(1, 4);
  dumps.erase(dumps.begin() + 1);
  trace::Analysis a = trace::analyse(dumps);
  EXPECT_EQ(a.firstCulprit, 1) << a.text;
  EXPECT_NE(a.text.find("no dump from rank 1: dead or not reached"), std::string::npos) << a.text;
}

TEST(FlightRecord, TraceCallsNothingStuckWhenAllFinished) {
  std::vector<trace::Dump> dumps;
  for (int r = 0; r < 2; ++r) {
    FlightRecorder f(8, 2);
    f.end(f.begin(allReduce(1), "allreduce.ring", false), Status::ok());
    dumps.push_back(roundTrip(header(r, 2), f.snapshot()));
  }
  trace::Analysis a = trace::analyse(dumps);
  EXPECT_EQ(a.firstCulprit, -1) << a.text;
}

TEST(FlightRecord, TraceRefusesMalformedDumps) {
  FlightRecorder f(2, 2);
  f.end(f.begin(allReduce(1), "allreduce.ring", false), Status::ok());
  const std::string good = flightRecordJson(header(0, 2), f.snapshot());
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  const std::vector<std::string> bad = {
      "",
      "null",
      "[]",
      "{",
      std::string(100000, '[') + std::string(100000, ']'),
      "{\"format\": \"myriad-flight-record\"}",
      good.substr(0, good.size() / 2),
      replace("\"rank\": 0", "\"rank\": 7"),
      replace("\"rank\": 0", "\"rank\": -1"),
      replace("\"nranks\": 2", "\"nranks\": 99999999999"),
      replace("\"nranks\": 2", "\"nranks\": \"2\""),
      replace("\"version\": 1", "\"version\": 2"),
      replace("\"in_call\": false", "\"in_call\": 0"),
      replace("\"waits_on\": null", "\"waits_on\": 5"),
      replace("\"calls\": [", "\"calls\": {\"a\": ["),
      replace("\"seq\": 1, \"op\"", "\"seq\": -1, \"op\""),
      replace("\"root\": -1", "\"root\": 1e300"),
      replace("\"peers\": []", "\"peers\": [{\"rank\": 9, \"send_bytes\": 1, \"recv_bytes\": 1}]"),
  };
  std::string error;
  ASSERT_TRUE(trace::parseDump(good, "good", &error).has_value()) << error;
  for (const std::string& text : bad) {
    error.clear();
    EXPECT_FALSE(trace::parseDump(text, "bad", &error).has_value()) << text.substr(0, 200);
    EXPECT_FALSE(error.empty());
  }
}

#endif  // MYRIAD_HAVE_TRACE_REPORT

}  // namespace
}  // namespace myriad
