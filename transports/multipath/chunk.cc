// Chunk plans and reassembly counting (see chunk.h).
#include "transports/multipath/chunk.h"

namespace myriad::mp {

std::vector<ChunkSpan> planChunks(uint64_t total, uint64_t splitBytes, uint64_t chunkBytes) {
  if (total <= splitBytes || chunkBytes == 0) return {ChunkSpan{0, 0, total}};
  std::vector<ChunkSpan> out;
  out.reserve(static_cast<size_t>((total + chunkBytes - 1) / chunkBytes));
  for (uint64_t off = 0; off < total; off += chunkBytes) {
    uint64_t len = total - off < chunkBytes ? total - off : chunkBytes;
    out.push_back(ChunkSpan{static_cast<uint32_t>(out.size()), off, len});
  }
  return out;
}

bool Reassembly::arrive(uint32_t index) {
  if (index >= got_.size() || got_[index]) return false;
  got_[index] = true;
  ++done_;
  return true;
}

bool chunkFits(const FrameHeader& h, uint64_t expectTotal, const Reassembly& r) {
  return h.total == expectTotal && h.chunks == r.chunks() && h.index < h.chunks && h.offset <= h.total &&
         h.length <= h.total - h.offset;
}

}  // namespace myriad::mp
