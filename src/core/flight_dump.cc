// The flight record's JSON: one object per dump, members in a fixed order, one call per line so that a
// person can read the file too. Numbers are integers or fixed-point milliseconds; strings go through
// jsonEscape.
#include "core/flight_dump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <ctime>

#include "base/log.h"
#include "core/comm.h"
#include "plan/dtype.h"
#include "rendezvous/peer_info.h"

namespace myriad {
namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 (overlong forms, surrogates and code points past
// U+10FFFF are invalid, as RFC 3629 says).
size_t utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(k) & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && b(1) < 0xa0) return 0;   // overlong
  if (c == 0xed && b(1) >= 0xa0) return 0;  // surrogate
  if (c == 0xf0 && b(1) < 0x90) return 0;   // overlong
  if (c == 0xf4 && b(1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

std::string quoted(std::string_view s) {
  return "\"" + jsonEscape(s) + "\"";
}

std::string ms(Clock::time_point t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double, std::milli>(t.time_since_epoch()).count());
  return buf;
}

std::string msOrNull(Clock::time_point t, bool present) {
  return present ? ms(t) : "null";
}

long long msBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

std::string wallText(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string callJson(const CallRecord& r, Clock::time_point now) {
  std::string j = "{\"seq\": " + std::to_string(r.seq) + ", \"op\": " + quoted(r.op) +
                  ", \"count\": " + std::to_string(r.count) + ", \"dtype\": " + quoted(dtypeName(r.dtype)) +
                  ", \"redop\": " + quoted(opName(r.redop)) + ", \"root\": " + std::to_string(r.root) +
                  ", \"algorithm\": " + quoted(r.algorithm) + ", \"path\": " + quoted(r.device ? "device" : "host") +
                  ", \"peers\": [";
  for (size_t i = 0; i < r.peers.size(); ++i)
    j += std::string(i ? ", " : "") + "{\"rank\": " + std::to_string(r.peers[i].peer) +
         ", \"send_bytes\": " + std::to_string(r.peers[i].sendBytes) +
         ", \"recv_bytes\": " + std::to_string(r.peers[i].recvBytes) + "}";
  j += "], \"start_ms\": " + ms(r.start) + ", \"end_ms\": " + msOrNull(r.finished, !r.open);
  j += ", \"status\": " + quoted(r.open ? "open" : r.code == Code::kSuccess ? "ok" : codeName(r.code));
  if (!r.open && r.code != Code::kSuccess) j += ", \"error\": " + quoted(r.error);
  if (r.lastWait.peer >= 0)
    j += ", \"waited_on\": " + std::to_string(r.lastWait.peer) +
         ", \"waited_ms\": " + std::to_string(msBetween(r.lastWait.since, r.open ? now : r.finished));
  return j + "}";
}

}  // namespace

std::string jsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else if (c >= 0x80) {
      size_t n = utf8Length(s, i);
      if (n == 0) {
        out += "\xef\xbf\xbd";  // U+FFFD for one invalid byte, then carry on
        ++i;
        continue;
      }
      out.append(s.substr(i, n));
      i += n;
      continue;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string flightRecordJson(const DumpHeader& h, const FlightSnapshot& snap) {
  const CallState& st = snap.state;
  const auto wallMs = std::chrono::duration_cast<std::chrono::milliseconds>(h.wallNow.time_since_epoch()).count();
  std::string j = "{\n";
  j += "  \"format\": \"myriad-flight-record\",\n  \"version\": " + std::to_string(kFlightFormatVersion) + ",\n";
  j += "  \"rank\": " + std::to_string(h.rank) + ",\n  \"nranks\": " + std::to_string(h.nranks) + ",\n";
  j += "  \"host\": " + quoted(h.host) + ",\n  \"pid\": " + std::to_string(h.pid) + ",\n";
  j += "  \"comm\": " + quoted(h.comm) + ",\n  \"reason\": " + quoted(h.reason) + ",\n";
  j += "  \"dump_ms\": " + ms(h.steadyNow) + ",\n  \"dump_wall_ms\": " + std::to_string(wallMs) +
       ",\n  \"dump_wall\": " + quoted(wallText(h.wallNow)) + ",\n";
  j += "  \"capacity\": " + std::to_string(snap.capacity) + ",\n";
  j += "  \"state\": {\"seq\": " + std::to_string(st.seq) + ", \"in_call\": " + (st.inCall ? "true" : "false") +
       ", \"op\": " + quoted(st.op) + ", \"count\": " + std::to_string(st.count) +
       ", \"dtype\": " + quoted(st.seq ? dtypeName(st.dtype) : "") +
       ", \"entered_ms\": " + msOrNull(st.entered, st.seq > 0) +
       ", \"finished_ms\": " + msOrNull(st.finished, st.seq > 0 && !st.inCall);
  if (st.inCall && snap.wait.peer >= 0)
    j += ", \"waits_on\": " + std::to_string(snap.wait.peer) +
         ", \"silent_ms\": " + std::to_string(msBetween(snap.wait.since, h.steadyNow));
  else
    j += ", \"waits_on\": null";
  j += "},\n";
  if (h.firstError.isOk())
    j += "  \"error\": null,\n";
  else
    j += "  \"error\": {\"code\": " + quoted(codeName(h.firstError.code())) +
         ", \"message\": " + quoted(h.firstError.message()) + "},\n";
  j += "  \"calls\": [";
  for (size_t i = 0; i < snap.records.size(); ++i)
    j += std::string(i ? ",\n" : "\n") + "    " + callJson(snap.records[i], h.steadyNow);
  j += snap.records.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return j;
}

Status writeFlightRecord(Comm& comm, const std::string& path, const std::string& reason) {
  DumpHeader h;
  h.rank = comm.rank();
  h.nranks = comm.nranks();
  h.host = localHostname();
  h.pid = static_cast<int>(getpid());
  h.comm = comm.commTag();
  h.reason = reason;
  h.firstError = comm.errors().first();
  FlightSnapshot snap = comm.flight().snapshot();
  h.steadyNow = Clock::now();
  h.wallNow = std::chrono::system_clock::now();
  const std::string text = flightRecordJson(h, snap);
  const std::string tmp = path + ".tmp" + std::to_string(h.pid);
  const std::string who = "rank " + std::to_string(h.rank) + ": flight record to " + path;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return systemError(who + ": cannot create " + tmp, errno);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return systemError(who + ": write failed", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return systemError(who + ": cannot finish the file", err);
  }
  return Status::ok();
}

std::string dumpOnErrorPath(const Comm& comm, const std::string& dir) {
  std::string host = localHostname();
  for (char& c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
  return dir + "/myriad-" + host + "-" + std::to_string(getpid()) + "-rank" + std::to_string(comm.rank()) + ".json";
}

void dumpOnError(Comm& comm) {
  const std::string& dir = comm.config().dumpOnError;
  if (dir.empty()) return;
  const std::string path = dumpOnErrorPath(comm, dir);
  Status s = writeFlightRecord(comm, path, "error");
  if (s.isOk())
    MYR_LOG(kWarn, kColl, comm.rank(), "flight record written to " + path + " (MYRIAD_DUMP_ON_ERROR)");
  else
    MYR_LOG(kWarn, kColl, comm.rank(), s.message() + " (MYRIAD_DUMP_ON_ERROR)");
}

}  // namespace myriad
