// The one vocabulary (hpcz.hpp, "names"): codec names come from the codec registry; dtype and bound
// mode names are listed here, once.
#include <array>

#include "codecs/codec.hpp"
#include "common/storage.hpp"
#include "hpcz/hpcz.hpp"

namespace hpcz {

namespace {
struct DTypeName {
  DType t;
  const char* name;
  const char* short_name;
};
template <class... Ts> constexpr auto dtype_table(detail::DTypeList<Ts...>) {
  using detail::StorageTraits;
  return std::array<DTypeName, sizeof...(Ts)>{
      {{StorageTraits<Ts>::dtype, StorageTraits<Ts>::name, StorageTraits<Ts>::short_name}...}};
}
// From the traits (a new type is named there): every API dtype, storage types included.
constexpr auto kDTypes = dtype_table(detail::AllStorageTypes{});

struct BoundModeName {
  BoundMode m;
  const char* name;
  const char* long_name;  // hdf5plugin's spelling (absolute=, relative=)
};
constexpr BoundModeName kBoundModes[] = {{BoundMode::abs, "abs", "absolute"},
                                         {BoundMode::rel, "rel", "relative"},
                                         {BoundMode::pw_rel, "pw_rel", "pointwise_relative"},
                                         {BoundMode::psnr, "psnr", "psnr"},
                                         {BoundMode::nrmse, "nrmse", "nrmse"},
                                         {BoundMode::abs_and_rel, "abs_and_rel", "absolute_and_relative"},
                                         {BoundMode::abs_or_rel, "abs_or_rel", "absolute_or_relative"}};
}  // namespace

const char* codec_name(Codec c) {
  const codecs::CodecOps* ops = codecs::find(c);
  return ops ? ops->name : "unknown";
}

std::optional<Codec> parse_codec(std::string_view name) {
  for (const codecs::CodecOps* c : codecs::all())
    if (name == c->name) return c->id;
  return std::nullopt;
}

std::optional<Codec> codec_of_id(unsigned id) {
  for (const codecs::CodecOps* c : codecs::all())
    if (id == unsigned(c->id)) return c->id;
  return std::nullopt;
}

std::vector<std::string> codec_names() {
  std::vector<const codecs::CodecOps*> v = codecs::all();
  std::vector<std::string> out;
  for (unsigned id = 0; id < 256; ++id)  // by number, whatever the table's order
    for (const codecs::CodecOps* c : v)
      if (unsigned(c->id) == id) out.push_back(c->name);
  return out;
}

const char* dtype_name(DType t) {
  for (const DTypeName& d : kDTypes)
    if (d.t == t) return d.name;
  return "unknown";
}

const char* dtype_short_name(DType t) {
  for (const DTypeName& d : kDTypes)
    if (d.t == t) return d.short_name;
  return "unknown";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeName& d : kDTypes)
    if (name == d.name || name == d.short_name) return d.t;
  return std::nullopt;
}

std::optional<DType> dtype_of_id(unsigned id) {
  for (const DTypeName& d : kDTypes)
    if (id == unsigned(d.t)) return d.t;
  return std::nullopt;
}

std::vector<std::string> dtype_names() {
  std::vector<std::string> out;
  for (const DTypeName& d : kDTypes) out.push_back(d.name);
  return out;
}

const char* bound_mode_name(BoundMode m) {
  for (const BoundModeName& b : kBoundModes)
    if (b.m == m) return b.name;
  return "unknown";
}

std::optional<BoundMode> parse_bound_mode(std::string_view name) {
  for (const BoundModeName& b : kBoundModes)
    if (name == b.name || name == b.long_name) return b.m;
  return std::nullopt;
}

std::optional<BoundMode> bound_mode_of_id(unsigned id) {
  for (const BoundModeName& b : kBoundModes)
    if (id == unsigned(b.m)) return b.m;
  return std::nullopt;
}

std::vector<std::string> bound_mode_names() {
  std::vector<std::string> out;
  for (const BoundModeName& b : kBoundModes) out.push_back(b.name);
  return out;
}

std::string names_list(const std::vector<std::string>& names, const char* quote) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += i + 1 == names.size() ? " or " : ", ";
    s += std::string(quote) + names[i] + quote;
  }
  return s;
}

}  // namespace hpcz
