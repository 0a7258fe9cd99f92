// Checkpoints in the safetensors format: an 8-byte little-endian header length, a JSON header
// {name: {"dtype": "F32"|"F64"|"I32"|"BOOL", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}}
// padded with spaces to a multiple of 8 bytes, then the raw little-endian data. Files move between bprop
// native, bprop in WebAssembly (the *_bytes functions) and other tools that read safetensors.
//
// Every failure is a ValueError that starts "For 'save_checkpoint'" or "For 'load_checkpoint'" and names the
// file (or buffer) and, where one is involved, the tensor. Loading into a Cell validates the whole file
// against the model before writing any parameter: on an error the model is unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bprop/cell.h"

namespace bprop {

/// Tensors by name, in order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using CheckpointMetadata = std::map<std::string, std::string>;

/// A parsed checkpoint: the tensors in file order and the "__metadata__" strings.
struct Checkpoint {
  NamedTensors tensors;
  CheckpointMetadata metadata;
  /// The tensor named `name`, or nullptr.
  const Tensor* find(const std::string& name) const;
};

/// The safetensors name of a dtype: "F32", "F64", "I32", "BOOL".
const char* safetensors_dtype_name(DType dtype);

/// The bytes of a checkpoint holding `tensors` (names unique and non-empty) or every parameter of `cell`
/// (parameters_and_names(), moving statistics included).
std::vector<uint8_t> save_checkpoint_bytes(const NamedTensors& tensors, const CheckpointMetadata& metadata = {});
std::vector<uint8_t> save_checkpoint_bytes(const Cell& cell, const CheckpointMetadata& metadata = {});
/// Writes the same bytes to `path` (through a temporary file renamed into place).
void save_checkpoint(const NamedTensors& tensors, const std::string& path, const CheckpointMetadata& metadata = {});
void save_checkpoint(const Cell& cell, const std::string& path, const CheckpointMetadata& metadata = {});

/// Parses and validates checkpoint bytes (header, dtypes, shapes, offsets covering the data exactly).
/// `source` names the buffer in error messages.
Checkpoint load_checkpoint_bytes(const uint8_t* data, size_t size, const std::string& source = "<memory>");
Checkpoint load_checkpoint_bytes(const std::vector<uint8_t>& bytes, const std::string& source = "<memory>");
/// Reads and parses the file at `path`.
Checkpoint load_checkpoint(const std::string& path);

/// The names a training checkpoint gives the optimizer's state beside the weights ("optimizer.<parameter>.<slot>",
/// from Optimizer::state_dict(kOptimizerStatePrefix)), so that a run resumes exactly from one file, as MindSpore's
/// training checkpoints hold the moments next to the weights.
inline constexpr const char* kOptimizerStatePrefix = "optimizer.";
/// True for a tensor name under kOptimizerStatePrefix.
bool is_optimizer_state(const std::string& name);

/// Copies the checkpoint's tensors into the cell's parameters of the same names after checking every
/// shape and dtype. strict: the names must match exactly (a parameter missing from the checkpoint or a
/// tensor the model does not have is an error; the optimizer state, is_optimizer_state, is not the model's and
/// never counts as extra); not strict: missing parameters keep their values and extra tensors are ignored. Returns the names of the parameters not loaded (empty when strict). `source` names
/// the checkpoint in error messages.
std::vector<std::string> load_param_into_net(Cell& cell, const Checkpoint& checkpoint, bool strict = true,
                                             const std::string& source = "<checkpoint>");
/// Reads the file at `path` into the cell, as load_param_into_net.
std::vector<std::string> load_checkpoint(Cell& cell, const std::string& path, bool strict = true);
/// Reads checkpoint bytes into the cell, as load_param_into_net.
std::vector<std::string> load_checkpoint_bytes(Cell& cell, const uint8_t* data, size_t size, bool strict = true,
                                               const std::string& source = "<memory>");
std::vector<std::string> load_checkpoint_bytes(Cell& cell, const std::vector<uint8_t>& bytes, bool strict = true,
                                               const std::string& source = "<memory>");

}  // namespace bprop
