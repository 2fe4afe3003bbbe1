// A tcp lane letting go of a chunk whose other copy was acknowledged (TcpLane::cancel): a frame not begun is
// dropped; one partly written is finished from the lane's own copy, so that the caller's buffer is free at
// once (holds() says so) and the bytes on the wire are still the chunk as posted. Before, such a frame kept
// the send from completing for as long as its path was dead (a spine link cut mid-transfer).
#include "transports/tcp/tcp_lane.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace myriad {
namespace {

mp::FrameHeader dataFrame(uint64_t op, uint32_t index, uint64_t length) {
  mp::FrameHeader h;
  h.kind = mp::FrameHeader::kData;
  h.op = op;
  h.index = index;
  h.chunks = 2;
  h.offset = index * length;
  h.length = length;
  h.total = 2 * length;
  return h;
}

// Reads whatever the lane's peer socket holds now (non-blocking) onto `got`.
void drain(int fd, std::vector<uint8_t>* got) {
  uint8_t buf[1 << 16];
  while (true) {
    ssize_t k = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (k <= 0) return;
    got->insert(got->end(), buf, buf + k);
  }
}

TEST(TcpLane, CancelReleasesThePayloadOfAFrameBegunAndDropsOneNotBegun) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int small = 4096;  // a short send buffer: the first frame cannot leave in one write
  ASSERT_EQ(::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  ASSERT_EQ(::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
  TcpLane lane(sv[0], 0, false, nullptr, "rank 1", Status::ok());
  Fd peer(sv[1]);
  const size_t n = 1 << 20;
  std::vector<uint8_t> first(n), second(n, 0xee);
  std::iota(first.begin(), first.end(), uint8_t{7});
  const std::vector<uint8_t> expect = first;
  lane.postData(dataFrame(9, 0, n), first.data());
  lane.postData(dataFrame(9, 1, n), second.data());
  lane.flush();  // part of the first frame leaves, the socket is full
  ASSERT_TRUE(lane.holds(9));
  ASSERT_FALSE(lane.flushed());

  EXPECT_FALSE(lane.cancel(9, 0)) << "a frame begun cannot be dropped from the stream";
  EXPECT_TRUE(lane.cancel(9, 1)) << "a frame not begun is dropped";
  EXPECT_FALSE(lane.holds(9)) << "the caller's buffers are still read by the lane";
  std::fill(first.begin(), first.end(), uint8_t{0});  // the caller reuses its buffer at once

  std::vector<uint8_t> got;
  for (int i = 0; i < 100000 && !lane.flushed(); ++i) {
    drain(peer.get(), &got);
    lane.flush();
  }
  ASSERT_TRUE(lane.flushed());
  drain(peer.get(), &got);
  ASSERT_EQ(got.size(), sizeof(mp::FrameHeader) + n) << "the dropped frame was sent, or the first cut short";
  mp::FrameHeader h;
  std::memcpy(&h, got.data(), sizeof h);
  EXPECT_EQ(h.op, 9u);
  EXPECT_EQ(h.index, 0u);
  EXPECT_EQ(h.length, n);
  EXPECT_TRUE(std::equal(expect.begin(), expect.end(), got.begin() + sizeof h))
      << "the rest of the frame did not come from the lane's copy";
}

// Frames queued together leave in one sendmsg: on a SOCK_SEQPACKET pair each sendmsg is one record, so the
// peer's first recv returns all of them (one ack per frame and system call before: 56 bytes).
TEST(TcpLane, QueuedFramesLeaveInOneWrite) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  ASSERT_EQ(::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
  TcpLane lane(sv[0], 0, false, nullptr, "rank 1", Status::ok());
  Fd peer(sv[1]);
  std::vector<uint8_t> payload(1000);
  std::iota(payload.begin(), payload.end(), uint8_t{1});
  for (uint32_t i = 0; i < 5; ++i) {
    mp::FrameHeader a;
    a.kind = mp::FrameHeader::kAck;
    a.op = 40 + i;
    a.lane = i;
    lane.postControl(a);
  }
  lane.postData(dataFrame(3, 1, payload.size()), payload.data());
  lane.flush();
  ASSERT_TRUE(lane.flushed());
  std::vector<uint8_t> got(1 << 16);
  ssize_t k = ::recv(peer.get(), got.data(), got.size(), MSG_DONTWAIT);
  ASSERT_EQ(k, static_cast<ssize_t>(6 * sizeof(mp::FrameHeader) + payload.size())) << "not one record";
  for (uint32_t i = 0; i < 5; ++i) {
    mp::FrameHeader h;
    std::memcpy(&h, got.data() + i * sizeof h, sizeof h);
    EXPECT_EQ(h.kind, mp::FrameHeader::kAck);
    EXPECT_EQ(h.op, 40u + i);
  }
  mp::FrameHeader d;
  std::memcpy(&d, got.data() + 5 * sizeof d, sizeof d);
  EXPECT_EQ(d.op, 3u);
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), got.begin() + 6 * sizeof d));
}

// Many frames of mixed sizes through a send buffer far smaller than they are, read slowly: every partial
// write resumes where it stopped, within a frame or between two, and the stream is the frames in order.
TEST(TcpLane, GatheredWritesResumeExactlyAfterPartialSends) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int small = 4096;
  ASSERT_EQ(::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  ASSERT_EQ(::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
  TcpLane lane(sv[0], 0, false, nullptr, "rank 1", Status::ok());
  Fd peer(sv[1]);
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<uint8_t> expect;
  std::vector<mp::FrameHeader> frames;
  for (uint32_t i = 0; i < 40; ++i) {
    mp::FrameHeader h;
    if (i % 3 == 0) {
      h.kind = mp::FrameHeader::kAck;
      h.op = i;
    } else {
      const size_t len = (i * 7919) % 20000 + 1;
      h = dataFrame(i, 0, len);
      payloads.emplace_back(len);
      for (size_t b = 0; b < len; ++b) payloads.back()[b] = static_cast<uint8_t>(i * 31 + b);
    }
    frames.push_back(h);
  }
  size_t p = 0;
  for (const mp::FrameHeader& h : frames) {
    const auto* hb = reinterpret_cast<const uint8_t*>(&h);
    expect.insert(expect.end(), hb, hb + sizeof h);
    if (h.kind == mp::FrameHeader::kData) {
      lane.postData(h, payloads[p].data());
      expect.insert(expect.end(), payloads[p].begin(), payloads[p].end());
      ++p;
    } else {
      lane.postControl(h);
    }
  }
  std::vector<uint8_t> got;
  uint8_t buf[1500];  // a slow reader: a little at a time
  for (int i = 0; i < 1000000 && !lane.flushed(); ++i) {
    lane.flush();
    ssize_t k = ::recv(peer.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (k > 0) got.insert(got.end(), buf, buf + k);
  }
  ASSERT_TRUE(lane.flushed());
  drain(peer.get(), &got);
  ASSERT_EQ(got.size(), expect.size());
  EXPECT_TRUE(got == expect) << "the byte stream is not the frames in order";
  EXPECT_FALSE(lane.holds(1)) << "a written frame is still counted";
}

}  // namespace
}  // namespace myriad
