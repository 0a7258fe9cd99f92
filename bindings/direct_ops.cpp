// The hot path from JavaScript: plain WebAssembly exports taking and returning integer handles and numbers,
// called without embind (Module._bp_op2(op, a, b)). An op call from JavaScript is one of these calls: the op
// is an index into a table of OpDefs (resolved once, by name, when web/index.js defines the op's function),
// and a number operand is turned into a scalar here, in the same call. The argument lists are the core's
// recycled ones (registry/arg_lists.h).
//
// Every export catches C++ exceptions (guard.h) and returns 0 (handles) or NaN (numbers) after recording
// the error; the wrapper then reads it with takeError.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/device.h"
#include "graph/trace.h"
#include "guard.h"
#include "handles.h"
#include "registry/arg_lists.h"

namespace bprop::js {
namespace {

std::vector<const OpDef*>& op_table() {
  static std::vector<const OpDef*> table;
  return table;
}

const OpDef& op_at(uint32_t index) {
  const auto& table = op_table();
  if (index >= table.size()) throw ValueError("bprop: invalid op index");
  return *table[index];
}

/// The index of a registered op for the direct calls (UnknownOpError for an unknown name).
val op_index(std::string name) {
  return guarded([&] {
    const OpDef* op = &registry().get(name);
    auto& table = op_table();
    for (size_t i = 0; i < table.size(); ++i) {
      if (table[i] == op) return val(static_cast<double>(i));
    }
    table.push_back(op);
    return val(static_cast<double>(table.size() - 1));
  });
}

/// [rank, dims...] of the last bp_shape call.
std::vector<double>& shape_buffer() {
  static std::vector<double> buffer;
  return buffer;
}

}  // namespace
}  // namespace bprop::js

using bprop::js::catching;
using bprop::js::handles;

extern "C" {

/// op(a) with the op's default attributes.
EMSCRIPTEN_KEEPALIVE uint32_t bp_op1(uint32_t op, uint32_t a) {
  return catching([&] { return handles().add(bprop::detail::call_with_args(bprop::js::op_at(op), handles().get(a))); },
                  0u);
}

/// op(a, b) with the op's default attributes.
EMSCRIPTEN_KEEPALIVE uint32_t bp_op2(uint32_t op, uint32_t a, uint32_t b) {
  return catching(
      [&] {
        return handles().add(
            bprop::detail::call_with_args(bprop::js::op_at(op), handles().get(a), handles().get(b)));
      },
      0u);
}

/// op(a, s) or, with scalar_first, op(s, a), where s is the number v as a scalar like a (bprop::scalar_like:
/// a's dtype when a is float).
EMSCRIPTEN_KEEPALIVE uint32_t bp_op2s(uint32_t op, uint32_t a, double v, int scalar_first) {
  return catching(
      [&] {
        const bprop::OpDef& def = bprop::js::op_at(op);
        const bprop::Tensor& t = handles().get(a);
        const bprop::Tensor s = bprop::scalar_like(v, t);
        return handles().add(scalar_first ? bprop::detail::call_with_args(def, s, t)
                                          : bprop::detail::call_with_args(def, t, s));
      },
      0u);
}

/// Frees a handle.
EMSCRIPTEN_KEEPALIVE void bp_release(uint32_t h) { handles().release(h); }

/// A second handle to the same tensor.
EMSCRIPTEN_KEEPALIVE uint32_t bp_dup(uint32_t h) {
  return catching([&] { return handles().add(handles().get(h)); }, 0u);
}

/// The only element of a one-element tensor (NaN and an error otherwise). NaN is also a value, so the wrapper
/// tells them apart with bp_error_kind: clear it first.
EMSCRIPTEN_KEEPALIVE double bp_item(uint32_t h) {
  bprop::js::g_error_kind = -1;
  return catching([&] { return handles().get(h).item(); }, std::nan(""));
}

/// The dtype as bprop::DType's value (-1 and an error for a bad handle).
EMSCRIPTEN_KEEPALIVE int bp_dtype(uint32_t h) {
  return catching([&] { return static_cast<int>(handles().get(h).dtype()); }, -1);
}

/// The address of [rank, dims...] as doubles, valid until the next call (0 and an error for a bad handle).
EMSCRIPTEN_KEEPALIVE const double* bp_shape(uint32_t h) {
  return catching(
      [&]() -> const double* {
        const bprop::Shape& s = handles().get(h).shape();
        std::vector<double>& out = bprop::js::shape_buffer();
        out.assign(1, static_cast<double>(s.size()));
        for (int64_t d : s) out.push_back(static_cast<double>(d));
        return out.data();
      },
      static_cast<const double*>(nullptr));
}

/// The address of the tensor's elements in the heap (0 and an error for a bad handle, a ValueError for a tensor on
/// a device, whose elements are not in the heap, or for an abstract tensor while jit traces: it has none).
EMSCRIPTEN_KEEPALIVE const void* bp_data(uint32_t h) {
  return catching([&]() -> const void* { return handles().get(h).data<unsigned char>(); },
                  static_cast<const void*>(nullptr));
}

/// Starts reading the tensor's values to the heap (bprop::read_async): when they are there (at once for a heap
/// tensor, when the device completes for a device one), Module.bpReadDone(ticket, handle) gets a new handle to
/// the host copy, or 0 with the error recorded.
EMSCRIPTEN_KEEPALIVE void bp_read_async(uint32_t h, uint32_t ticket) {
  auto finish = [ticket](uint32_t out) { EM_ASM({ Module.bpReadDone($0, $1); }, ticket, out); };
  bprop::Tensor t;
  if (!catching([&] { t = handles().get(h); return true; }, false)) return finish(0);
  bprop::read_async(t, [finish](bprop::Tensor host, std::exception_ptr error) {
    const uint32_t out = catching(
        [&] {
          if (error) std::rethrow_exception(error);
          return handles().add(host);
        },
        0u);
    finish(out);
  });
}

/// The kind of the recorded error (-1: none), without clearing it.
EMSCRIPTEN_KEEPALIVE int bp_error_kind() { return bprop::js::g_error_kind; }

}  // extern "C"

EMSCRIPTEN_BINDINGS(bprop_direct) { emscripten::function("opIndex", &bprop::js::op_index); }
