#include "bprop/nn/checkpoint.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "bprop/device.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"

namespace bprop {

static_assert(std::endian::native == std::endian::little,
              "checkpoints store little-endian data and are read and written with memcpy");

namespace {

using ordered_json = nlohmann::ordered_json;
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // the limit safetensors itself applies

[[noreturn]] void save_error(const std::string& where, const std::string& what) {
  throw ValueError("For 'save_checkpoint', " + where + ": " + what);
}
[[noreturn]] void load_error(const std::string& where, const std::string& what) {
  throw ValueError("For 'load_checkpoint', " + where + ": " + what);
}

bool parse_dtype_name(const std::string& s, DType* dt) {
  static const std::pair<const char*, DType> kNames[] = {
      {"F32", DType::Float32}, {"F64", DType::Float64}, {"F16", DType::Float16}, {"BF16", DType::BFloat16},
      {"I32", DType::Int32},   {"BOOL", DType::Bool}};
  for (const auto& [n, d] : kNames) {
    if (s == n) {
      *dt = d;
      return true;
    }
  }
  return false;
}

std::vector<uint8_t> serialize(const NamedTensors& tensors, const CheckpointMetadata& metadata,
                               const std::string& where) {
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json meta = ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty()) save_error(where, "a tensor name is empty");
    if (name == "__metadata__") save_error(where, "'__metadata__' is reserved and cannot name a tensor");
    if (!names.insert(name).second) save_error(where, "the name '" + name + "' is used twice");
    if (!t.defined()) save_error(where, "tensor '" + name + "' is undefined");
    if (t.is_abstract()) {
      save_error(where, "tensor '" + name + "' is a traced value (inside jit) with no data to write");
    }
    const uint64_t bytes = t.nbytes();
    header[name] = ordered_json{
        {"dtype", safetensors_dtype_name(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8 != 0) text.push_back(' ');  // data starts 8-byte aligned, as safetensors writes it
  std::vector<uint8_t> out(8 + text.size() + offset);
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  uint8_t* data = out.data() + 8 + text.size();
  for (const auto& [name, t] : tensors) {
    if (t.nbytes() > 0) std::memcpy(data, t.cpu().raw_data(), t.nbytes());  // (device tensors through a copy)
    data += t.nbytes();
  }
  return out;
}

uint64_t json_uint(const ordered_json& v, const std::string& where, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  load_error(where, what + " must be a non-negative integer, got " + v.dump());
}

Checkpoint parse(const uint8_t* bytes, size_t size, const std::string& where) {
  if (size < 8) {
    load_error(where, "truncated: " + std::to_string(size) +
                          " bytes, but a safetensors file starts with an 8-byte header length");
  }
  uint64_t n = 0;
  std::memcpy(&n, bytes, 8);
  if (n > kMaxHeaderBytes) {
    load_error(where, "the header length " + std::to_string(n) + " is larger than the " +
                          std::to_string(kMaxHeaderBytes) + "-byte limit (not a safetensors file?)");
  }
  if (n > size - 8) {
    load_error(where, "truncated: the header is " + std::to_string(n) + " bytes but only " + std::to_string(size - 8) +
                          " follow the length");
  }
  const char* text = reinterpret_cast<const char*>(bytes + 8);
  if (n == 0 || text[0] != '{') load_error(where, "the header is not a JSON object (not a safetensors file?)");
  ordered_json header;
  if (const size_t depth = json_depth(std::string_view(text, n)); depth > kMaxJsonDepth) {
    load_error(where, "the header nests lists and objects " + std::to_string(depth) + " deep, more than the limit of " +
                          std::to_string(kMaxJsonDepth));
  }
  try {
    header = ordered_json::parse(text, text + n);
  } catch (const ordered_json::exception& e) {
    load_error(where, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) load_error(where, "the header is not a JSON object");

  const uint8_t* data = bytes + 8 + n;
  const uint64_t data_size = size - 8 - n;
  Checkpoint ck;
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) load_error(where, "'__metadata__' must be an object of strings");
      for (const auto& [k, v] : info.items()) {
        if (!v.is_string()) load_error(where, "'__metadata__' entry '" + k + "' is not a string");
        ck.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string t = "tensor '" + name + "'";
    if (name.empty()) load_error(where, "a tensor name is empty");
    if (!info.is_object()) load_error(where, t + ": the entry is not an object");
    if (!info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets")) {
      load_error(where, t + ": the entry needs dtype, shape and data_offsets");
    }
    const auto& jd = info["dtype"];
    if (!jd.is_string()) load_error(where, t + ": dtype is not a string");
    Entry e{name, DType::Float32, {}, 0, 0};
    if (!parse_dtype_name(jd.get<std::string>(), &e.dtype)) {
      load_error(where, t + " has dtype " + jd.get<std::string>() +
                            ", which bprop does not read (F32, F64, F16, BF16, I32, BOOL)");
    }
    const auto& js = info["shape"];
    if (!js.is_array()) load_error(where, t + ": shape is not an array");
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : js) {
      const uint64_t v = json_uint(d, where, t + ": each shape dimension");
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        overflow = true;
      } else {
        e.shape.push_back(static_cast<int64_t>(v));
      }
      if (v != 0 && numel > std::numeric_limits<uint64_t>::max() / v / 8) overflow = true;
      numel *= v;
    }
    if (overflow) load_error(where, t + ": the shape " + js.dump() + " is too large");
    try {
      checked_numel(e.shape, e.dtype);  // rank and size limits, before anything is allocated for it
    } catch (const Error& ex) {
      load_error(where, t + ": " + ex.what());
    }
    const auto& jo = info["data_offsets"];
    if (!jo.is_array() || jo.size() != 2) load_error(where, t + ": data_offsets must be [begin, end]");
    e.begin = json_uint(jo[0], where, t + ": data_offsets[0]");
    e.end = json_uint(jo[1], where, t + ": data_offsets[1]");
    if (e.end < e.begin) load_error(where, t + ": data_offsets " + jo.dump() + " end before they begin");
    const uint64_t expected = numel * dtype_size(e.dtype);
    if (e.end - e.begin != expected) {
      load_error(where, t + ": data_offsets " + jo.dump() + " span " + std::to_string(e.end - e.begin) + " bytes but " +
                            jd.get<std::string>() + " " + js.dump() + " needs " + std::to_string(expected));
    }
    if (e.end > data_size) {
      load_error(where, "truncated: " + t + " ends at data byte " + std::to_string(e.end) + " but the data has only " +
                            std::to_string(data_size) + " bytes");
    }
    entries.push_back(std::move(e));
  }
  // The data must be covered exactly: no overlaps, no gaps, nothing after the last tensor.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t covered = 0;
  for (const Entry& e : entries) {
    if (e.begin < covered) load_error(where, "tensor '" + e.name + "' overlaps the tensor before it in the data");
    if (e.begin > covered) {
      load_error(where, "the data has unused bytes " + std::to_string(covered) + ".." + std::to_string(e.begin) +
                            " before tensor '" + e.name + "'");
    }
    covered = e.end;
  }
  if (covered != data_size) {
    load_error(where, "the data has " + std::to_string(data_size - covered) + " bytes after the last tensor");
  }
  for (const Entry& e : entries) {
    Tensor t = Tensor::empty(e.shape, e.dtype);
    const uint8_t* src = data + e.begin;
    if (e.dtype == DType::Bool) {
      for (uint64_t i = 0; i < e.end - e.begin; ++i) {
        if (src[i] > 1) load_error(where, "tensor '" + e.name + "' (BOOL) holds a byte that is neither 0 nor 1");
      }
    }
    if (e.end > e.begin) std::memcpy(t.raw_data(), src, e.end - e.begin);
    ck.tensors.emplace_back(e.name, t);
  }
  return ck;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::string text;
  switch (read_whole_file(path, text)) {
    case FileRead::CannotOpen: load_error("file '" + path + "'", "cannot open it for reading");
    case FileRead::Failed: load_error("file '" + path + "'", "reading failed");
    case FileRead::Ok: break;
  }
  return std::vector<uint8_t>(text.begin(), text.end());
}

void write_file(const std::vector<uint8_t>& bytes, const std::string& path) {
  const std::string where = "file '" + path + "'";
  const std::string tmp = path + ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  if (!out) save_error(where, "cannot open '" + tmp + "' for writing");
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  if (std::fclose(out) != 0 || !written) {
    std::remove(tmp.c_str());
    save_error(where, "writing failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    save_error(where, "cannot move the written file into place");
  }
}

NamedTensors cell_tensors(const Cell& cell) {
  NamedTensors out;
  for (const auto& [name, p] : cell.parameters_and_names()) out.emplace_back(name, static_cast<const Tensor&>(p));
  return out;
}

std::vector<std::string> load_into(Cell& cell, const Checkpoint& ck, bool strict, const std::string& where) {
  const auto params = cell.parameters_and_names();
  std::vector<std::pair<Parameter, const Tensor*>> plan;
  std::vector<std::string> not_loaded;
  std::set<std::string> model_names;
  for (const auto& [name, p] : params) {
    model_names.insert(name);
    const Tensor* t = ck.find(name);
    if (!t) {
      if (strict) load_error(where, "tensor '" + name + "' of the model is missing from the checkpoint");
      not_loaded.push_back(name);
      continue;
    }
    if (t->dtype() != p.dtype()) {
      load_error(where, "tensor '" + name + "' has dtype " + safetensors_dtype_name(t->dtype()) +
                            " in the checkpoint but the model's parameter is " + dtype_name(p.dtype()));
    }
    if (t->shape() != p.shape()) {
      load_error(where, "tensor '" + name + "' has shape " + shape_str(t->shape()) +
                            " in the checkpoint but the model's parameter has shape " + shape_str(p.shape()));
    }
    if (p.is_abstract()) {
      load_error(where, "parameter '" + name + "' is a traced value (inside jit)");
    }
    plan.emplace_back(p, t);
  }
  if (strict) {
    for (const auto& [name, t] : ck.tensors) {
      if (!model_names.count(name) && !is_optimizer_state(name))
        load_error(where, "the checkpoint has tensor '" + name + "' that the model does not have");
    }
  }
  for (auto& [p, t] : plan) copy_into(p, *t);  // (to a parameter's device, where it lives)
  return not_loaded;
}

}  // namespace

bool is_optimizer_state(const std::string& name) { return name.rfind(kOptimizerStatePrefix, 0) == 0; }

const Tensor* Checkpoint::find(const std::string& name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  return nullptr;
}

const char* safetensors_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "F32";
    case DType::Float64:
      return "F64";
    case DType::Int32:
      return "I32";
    case DType::Float16:
      return "F16";
    case DType::BFloat16:
      return "BF16";
    case DType::Bool:
      break;
  }
  return "BOOL";
}

std::vector<uint8_t> save_checkpoint_bytes(const NamedTensors& tensors, const CheckpointMetadata& metadata) {
  return serialize(tensors, metadata, "buffer");
}

std::vector<uint8_t> save_checkpoint_bytes(const Cell& cell, const CheckpointMetadata& metadata) {
  return serialize(cell_tensors(cell), metadata, "buffer");
}

void save_checkpoint(const NamedTensors& tensors, const std::string& path, const CheckpointMetadata& metadata) {
  write_file(serialize(tensors, metadata, "file '" + path + "'"), path);
}

void save_checkpoint(const Cell& cell, const std::string& path, const CheckpointMetadata& metadata) {
  save_checkpoint(cell_tensors(cell), path, metadata);
}

Checkpoint load_checkpoint_bytes(const uint8_t* data, size_t size, const std::string& source) {
  return parse(data, size, "'" + source + "'");
}

Checkpoint load_checkpoint_bytes(const std::vector<uint8_t>& bytes, const std::string& source) {
  return load_checkpoint_bytes(bytes.data(), bytes.size(), source);
}

Checkpoint load_checkpoint(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return parse(bytes.data(), bytes.size(), "file '" + path + "'");
}

std::vector<std::string> load_param_into_net(Cell& cell, const Checkpoint& checkpoint, bool strict,
                                             const std::string& source) {
  return load_into(cell, checkpoint, strict, "'" + source + "'");
}

std::vector<std::string> load_checkpoint(Cell& cell, const std::string& path, bool strict) {
  const std::string where = "file '" + path + "'";
  const std::vector<uint8_t> bytes = read_file(path);
  return load_into(cell, parse(bytes.data(), bytes.size(), where), strict, where);
}

std::vector<std::string> load_checkpoint_bytes(Cell& cell, const uint8_t* data, size_t size, bool strict,
                                               const std::string& source) {
  const std::string where = "'" + source + "'";
  return load_into(cell, parse(data, size, where), strict, where);
}

std::vector<std::string> load_checkpoint_bytes(Cell& cell, const std::vector<uint8_t>& bytes, bool strict,
                                               const std::string& source) {
  return load_checkpoint_bytes(cell, bytes.data(), bytes.size(), strict, source);
}

}  // namespace bprop
