// The error convention of every exported function: catch, record the kind and message, return a value that
// means "failed" (`undefined` for embind functions, handle 0 or NaN for the direct exports of direct_ops.cpp);
// the JavaScript wrapper reads the error (takeError) and throws the matching Error subclass. Errors never
// unwind through WebAssembly frames as JavaScript exceptions (that would skip C++ destructors and leave grad
// levels open).
#pragma once
#include <emscripten/val.h>

#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "bprop/errors.h"

namespace bprop::js {

using emscripten::val;

/// A JavaScript callback threw; its error waits on the JavaScript side.
struct JsCallbackError : std::runtime_error {
  JsCallbackError() : std::runtime_error("a JavaScript callback threw") {}
};

// Error kinds as the wrapper sees them: 0..4 are ErrorKind, then these; -1 is "no error".
constexpr int kOtherError = 5;
constexpr int kJsError = 6;

inline int g_error_kind = -1;
inline std::string g_error_message;

inline void set_error(int kind, std::string message) {
  g_error_kind = kind;
  g_error_message = std::move(message);
}

/// Runs f and returns its result; on a C++ exception records it and returns `on_error`.
template <typename R, typename F>
R catching(F&& f, R on_error) {
  try {
    return f();
  } catch (const Error& e) {
    set_error(static_cast<int>(e.kind()), e.what());
  } catch (const JsCallbackError&) {
    set_error(kJsError, std::string());
  } catch (const std::bad_alloc&) {
    // An allocation outside the checked paths (a binding's own buffers): still a memory error, not a trap.
    set_error(static_cast<int>(ErrorKind::Memory), "out of memory in the WebAssembly heap");
  } catch (const std::exception& e) {
    set_error(kOtherError, e.what());
  }
  return on_error;
}

/// Runs f; on any C++ exception records it and returns undefined.
template <typename F>
val guarded(F&& f) {
  return catching<val>(std::forward<F>(f), val::undefined());
}

/// {kind, message} of the last error, and clears it.
inline val take_error() {
  val out = val::object();
  out.set("kind", g_error_kind);
  out.set("message", g_error_message);
  g_error_kind = -1;
  g_error_message.clear();
  return out;
}

}  // namespace bprop::js
