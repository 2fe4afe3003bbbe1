// The tcp transport's accept side facing hellos from the network: a member's connection is accepted; a
// replayed lane hello, a wrong secret and a version-1 hello are each dropped and logged at WARN with the
// peer's address and the reason.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "base/config.h"
#include "base/hello.h"
#include "transports/tcp/tcp_transport.h"

namespace myriad {
namespace {

struct Rank {
  Config config;
  PeerInfo self;
  std::unique_ptr<TcpTransport> t;
  Rank(int rank, uint8_t secretByte) {
    config = Config::fromEnv().value();
    config.socketIfname = "lo";
    TransportContext ctx;
    ctx.rank = rank;
    ctx.nranks = 2;
    ctx.commTag = "hello-test";
    ctx.secret[0] = secretByte;
    ctx.config = &config;
    self.rank = rank;
    t = TcpTransport::create(ctx, &self).take();
  }
};

// Runs `opener` over a fresh socket to rank 1 until it is done or fails, accepting lanes from rank 0 the
// while; returns the accepted lane's fd (or -1) and the opener's status.
int openLane(Rank& to, Handshake& opener, Status* s, const std::vector<uint8_t>* raw = nullptr) {
  Fd fd(connectTo(to.self.tcpAddr, deadlineIn(2000), nullptr).value());
  if (raw) {
    EXPECT_EQ(send(fd.get(), raw->data(), raw->size(), 0), static_cast<ssize_t>(raw->size()));
  }
  int got = -1;
  for (int i = 0; i < 200 && got < 0; ++i) {
    if (!raw && s->isOk() && !opener.done()) *s = opener.step(fd.get());
    got = to.t->takeLane(0).value();
    if (!s->isOk() || raw) usleep(1000);
  }
  return got;
}

TEST(TcpHello, MembersInReplaysAndStrangersOut) {
  Rank r0(0, 1), r1(1, 1);
  // A member's lane: accepted.
  auto member = r0.t->openHello(1, true);
  Status s;
  int fd = openLane(r1, *member, &s);
  ASSERT_GE(fd, 0) << s.message();
  EXPECT_TRUE(s.isOk()) << s.message();
  Fd keep(fd);

  // Its bytes replayed on a new connection: the accepter's fresh nonce makes the old proof fail.
  testing::internal::CaptureStderr();
  const std::vector<uint8_t> recorded = member->sent();
  auto unused = r0.t->openHello(1, true);
  Status none;
  EXPECT_LT(openLane(r1, *unused, &none, &recorded), 0);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("WARN tcp: dropped connection from 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("wrong secret"), std::string::npos) << log;

  // Another secret: both sides refuse.
  Rank stranger(0, 2);
  testing::internal::CaptureStderr();
  auto hello = stranger.t->openHello(1, true);
  Status refused;
  EXPECT_LT(openLane(r1, *hello, &refused), 0);
  log = testing::internal::GetCapturedStderr();
  EXPECT_NE(refused.message().find("did not prove the communicator's secret"), std::string::npos) << refused.message();
  EXPECT_NE(log.find("wrong secret (not a member of this communicator)"), std::string::npos) << log;

  // A version-1 hello ("MYYL", the secret in clear, both ranks): refused by name.
  testing::internal::CaptureStderr();
  std::vector<uint8_t> v1 = {'M', 'Y', 'Y', 'L', 1};
  v1.resize(28, 0);
  EXPECT_LT(openLane(r1, *unused, &none, &v1), 0);
  log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("peer speaks hello version 1, this build speaks 2"), std::string::npos) << log;
}

}  // namespace
}  // namespace myriad
