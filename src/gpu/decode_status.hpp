// The status word GPU decoders OR their findings into (zero: the archive decoded cleanly).
#pragma once
#include <cstdint>

namespace hpcz::gpu {
enum DecodeStatus : uint32_t { kBadChecksum = 1, kBadChunk = 2, kBadTable = 4 };
}  // namespace hpcz::gpu
