// The parsers cli_util.hpp declares: the verbs' and the benchmarks' (bench/internal/) arguments.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_util.hpp"

namespace hpcz::cli {

std::vector<uint64_t> parse_dims(const std::string& s) {
  std::vector<uint64_t> d;
  size_t at = 0;
  for (;;) {  // extents separated by single 'x', each a decimal number >= 1
    const size_t x = std::min(s.find('x', at), s.size());
    const std::string part = s.substr(at, x - at);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError("bad dims '" + s + "' (expected extents like 100x500x500)");
    if (part.size() > 19 || std::stoull(part) > (uint64_t(1) << 60))
      throw UsageError("dims '" + s + "': extent " + part + " is too large");
    d.push_back(std::stoull(part));
    if (x == s.size()) break;
    at = x + 1;
  }
  if (d.size() > 4) throw UsageError("dims must have 1 to 4 extents: '" + s + "'");
  uint64_t n = 1;
  for (uint64_t e : d) {
    if (e && n > (uint64_t(1) << 60) / e) throw UsageError("dims '" + s + "': more than 2^60 values");
    n *= e;
  }
  return d;
}

DType parse_dtype(const std::string& s) {
  if (const auto t = hpcz::parse_dtype(s)) return *t;
  std::vector<std::string> names;
  for (const std::string& n : dtype_names()) names.push_back(dtype_short_name(*hpcz::parse_dtype(n)));
  throw UsageError("type must be " + names_list(names, "") + ", not '" + s + "'");
}

Codec parse_codec_flag(const std::string& flag, const std::string& s) {
  if (const auto c = hpcz::parse_codec(s)) return *c;
  throw UsageError(flag + " must be " + names_list(codec_names(), "") + ", not '" + s + "'");
}

double parse_number(const std::string& s, const char* what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end) throw UsageError(std::string("bad number for ") + what + ": '" + s + "'");
  return v;
}

std::string dims_string(const std::vector<uint64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

}  // namespace hpcz::cli
