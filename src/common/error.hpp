// Typed errors for library code: every failure is an hpcz::Error carrying an ErrorCode.
#pragma once
#include <string>

#include "hpcz/hpcz.hpp"

namespace hpcz {
[[noreturn]] inline void fail(ErrorCode code, const std::string& msg) { throw Error(code, msg); }
}  // namespace hpcz
