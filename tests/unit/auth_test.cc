// The hello's primitive against published vectors (RFC 4231 HMAC-SHA256, RFC 5869 HKDF, RFC 7914's
// PBKDF2-HMAC-SHA256; each also checked with Python's hmac/hashlib), and the Handshake state machine over a
// socket pair: both sides prove, a wrong secret, a replayed hello and an old or future version are refused.
#include "base/auth.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "base/hello.h"
#include "base/socket.h"

namespace myriad {
namespace {

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += {d[p[i] >> 4], d[p[i] & 15]};
  return s;
}

TEST(Auth, HmacSha256Rfc4231) {
  const std::string k1(20, '\x0b'), d1 = "Hi There";
  auto m = auth::hmac(reinterpret_cast<const uint8_t*>(k1.data()), k1.size(), {{d1.data(), d1.size()}});
  EXPECT_EQ(hex(m.data(), m.size()), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2, the data in two parts: the parts are concatenated.
  const std::string k2 = "Jefe", a = "what do ya want ", b = "for nothing?";
  m = auth::hmac(reinterpret_cast<const uint8_t*>(k2.data()), k2.size(), {{a.data(), a.size()}, {b.data(), b.size()}});
  EXPECT_EQ(hex(m.data(), m.size()), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block.
  const std::string k6(131, '\xaa'), d6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  m = auth::hmac(reinterpret_cast<const uint8_t*>(k6.data()), k6.size(), {{d6.data(), d6.size()}});
  EXPECT_EQ(hex(m.data(), m.size()), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Auth, HkdfRfc5869AndPbkdf2) {
  const std::string ikm(22, '\x0b');
  std::string salt, info;
  for (int i = 0; i <= 12; ++i) salt += static_cast<char>(i);
  for (int i = 0xf0; i <= 0xf9; ++i) info += static_cast<char>(i);
  uint8_t okm[42];
  auth::hkdf(reinterpret_cast<const uint8_t*>(ikm.data()), ikm.size(), salt, info, okm, sizeof(okm));
  EXPECT_EQ(hex(okm, sizeof(okm)),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  uint8_t dk[32];
  auth::pbkdf2("password", "salt", 4096, dk, sizeof(dk));
  EXPECT_EQ(hex(dk, sizeof(dk)), "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a");
}

TEST(Auth, EqualAndNonces) {
  const uint8_t x[4] = {1, 2, 3, 4}, y[4] = {1, 2, 3, 5};
  EXPECT_TRUE(auth::equal(x, x, 4));
  EXPECT_FALSE(auth::equal(x, y, 4));
  EXPECT_NE(auth::nonce(), auth::nonce());
}

// Two ends of a socket pair, stepped in turn on one thread.
struct Pair {
  Fd a, b;
  Pair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    a = Fd(fds[0]);
    b = Fd(fds[1]);
  }
};

const HelloIdent kIdent{'T', 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0};
auth::Key keyOf(uint8_t seed) {
  const uint8_t secret[16] = {seed};
  return auth::deriveKey(secret, sizeof(secret), "test hello");
}

// Steps both until each is done or failed; returns the accepter's status, *openerStatus the opener's.
Status drive(Handshake& opener, Handshake& accepter, Pair& p, Status* openerStatus) {
  Status so, sa;
  for (int i = 0; i < 20 && (!opener.done() || !accepter.done()); ++i) {
    if (so.isOk() && !opener.done()) so = opener.step(p.a.get());
    if (sa.isOk() && !accepter.done()) sa = accepter.step(p.b.get());
    if (!so.isOk() && !sa.isOk()) break;
  }
  *openerStatus = so;
  return sa;
}

TEST(Hello, BothSidesProveAndLeaveTheStreamAlone) {
  Pair p;
  Handshake o(Handshake::Role::kOpener, keyOf(1), kIdent), a(Handshake::Role::kAccepter, keyOf(1), {});
  Status so;
  Status sa = drive(o, a, p, &so);
  ASSERT_TRUE(so.isOk()) << so.message();
  ASSERT_TRUE(sa.isOk()) << sa.message();
  EXPECT_TRUE(o.done() && a.done());
  EXPECT_EQ(a.ident(), kIdent);
  // Frames after the hello are the caller's: nothing was read past the proof.
  ASSERT_EQ(send(p.a.get(), "next", 4, 0), 4);
  char buf[8] = {};
  EXPECT_EQ(recv(p.b.get(), buf, sizeof(buf), 0), 4);
  EXPECT_STREQ(buf, "next");
  // The secret's key never appears in what either side sent.
  const auth::Key k = keyOf(1);
  const std::string sent(o.sent().begin(), o.sent().end());
  EXPECT_EQ(sent.find(std::string(k.begin(), k.end())), std::string::npos);
}

TEST(Hello, WrongSecretIsRefusedOnBothSides) {
  Pair p;
  Handshake o(Handshake::Role::kOpener, keyOf(1), kIdent), a(Handshake::Role::kAccepter, keyOf(2), {});
  Status so;
  Status sa = drive(o, a, p, &so);
  EXPECT_NE(so.message().find("did not prove the communicator's secret"), std::string::npos) << so.message();
  EXPECT_NE(sa.message().find("wrong secret"), std::string::npos) << sa.message();
  EXPECT_FALSE(a.done());
}

TEST(Hello, ReplayedOpenerIsRefused) {
  Pair first;
  Handshake o(Handshake::Role::kOpener, keyOf(1), kIdent), a(Handshake::Role::kAccepter, keyOf(1), {});
  Status so;
  ASSERT_TRUE(drive(o, a, first, &so).isOk());
  ASSERT_TRUE(so.isOk());
  // An eavesdropper replays every byte the opener sent (Open and Proof) on a new connection.
  Pair second;
  const std::vector<uint8_t>& rec = o.sent();
  ASSERT_EQ(send(second.a.get(), rec.data(), rec.size(), 0), static_cast<ssize_t>(rec.size()));
  Handshake fresh(Handshake::Role::kAccepter, keyOf(1), {});
  Status s;
  for (int i = 0; i < 5 && s.isOk() && !fresh.done(); ++i) s = fresh.step(second.b.get());
  EXPECT_FALSE(fresh.done());
  EXPECT_NE(s.message().find("wrong secret"), std::string::npos) << s.message();
}

TEST(Hello, ReplayedAccepterIsRefused) {
  Pair first;
  Handshake o(Handshake::Role::kOpener, keyOf(1), kIdent), a(Handshake::Role::kAccepter, keyOf(1), {});
  Status so;
  ASSERT_TRUE(drive(o, a, first, &so).isOk());
  // A fake accepter answers a new opener with the recorded Answer: the opener's fresh nonce defeats it.
  Pair second;
  Handshake next(Handshake::Role::kOpener, keyOf(1), kIdent);
  const std::vector<uint8_t>& rec = a.sent();
  ASSERT_EQ(send(second.b.get(), rec.data(), rec.size(), 0), static_cast<ssize_t>(rec.size()));
  Status s;
  for (int i = 0; i < 5 && s.isOk() && !next.done(); ++i) s = next.step(second.a.get());
  EXPECT_FALSE(next.done());
  EXPECT_NE(s.message().find("did not prove"), std::string::npos) << s.message();
}

Status acceptBytes(const std::vector<uint8_t>& bytes) {
  Pair p;
  EXPECT_EQ(send(p.a.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  Handshake a(Handshake::Role::kAccepter, keyOf(1), {}, {0x5459594d});
  return a.step(p.b.get());
}

TEST(Hello, OldAndFutureVersionsAreRefusedByName) {
  std::vector<uint8_t> v1 = {'M', 'Y', 'Y', 'T'};  // version 1: magic, the secret in clear, both ranks
  v1.resize(28, 7);
  Status s = acceptBytes(v1);
  EXPECT_NE(s.message().find("peer speaks hello version 1, this build speaks 2"), std::string::npos) << s.message();
  std::vector<uint8_t> v3 = {'M', 'Y', 'R', 'H', 3, 0, 0, 0};
  v3.resize(36, 0);
  s = acceptBytes(v3);
  EXPECT_NE(s.message().find("peer speaks hello version 3, this build speaks 2"), std::string::npos) << s.message();
  s = acceptBytes(std::vector<uint8_t>(40, 0xab));
  EXPECT_NE(s.message().find("not a Myriad hello"), std::string::npos) << s.message();
}

// The store client tries a new connection only when the peer closed the hello (a root shedding load), never when
// it was refused: peerClosed() tells the two apart, whatever the messages say.
TEST(Hello, APeerClosingMidHelloIsToldApartFromARefusal) {
  Pair p;
  Handshake o(Handshake::Role::kOpener, keyOf(1), kIdent);
  ASSERT_TRUE(o.step(p.a.get()).isOk());  // the Open leaves; the Answer is awaited
  p.b.reset();                            // the accepter drops the client
  Status s;
  for (int i = 0; i < 5 && s.isOk(); ++i) s = o.step(p.a.get());
  EXPECT_FALSE(s.isOk());
  EXPECT_TRUE(o.peerClosed()) << s.message();

  Pair q;
  Handshake wrong(Handshake::Role::kOpener, keyOf(1), kIdent), a(Handshake::Role::kAccepter, keyOf(2), {});
  Status so;
  Status sa = drive(wrong, a, q, &so);
  ASSERT_FALSE(so.isOk());
  ASSERT_FALSE(sa.isOk());
  EXPECT_FALSE(wrong.peerClosed()) << so.message();
  EXPECT_FALSE(a.peerClosed()) << sa.message();
  Pair r;
  const std::vector<uint8_t> junk(40, 0xab);
  ASSERT_EQ(send(r.a.get(), junk.data(), junk.size(), 0), static_cast<ssize_t>(junk.size()));
  Handshake b(Handshake::Role::kAccepter, keyOf(1), {});
  EXPECT_FALSE(b.step(r.b.get()).isOk());
  EXPECT_FALSE(b.peerClosed());
}

}  // namespace
}  // namespace myriad
