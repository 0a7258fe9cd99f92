// The error convention of every embind function: catch, record the kind and message, return `undefined`;
// the JavaScript wrapper reads them (takeError) and throws the matching Error subclass. Errors never unwind
// through WebAssembly frames as JavaScript exceptions (that would skip C++ destructors and leave grad levels
// open).
#pragma once
#include <emscripten/val.h>

#include <new>
#include <stdexcept>
#include <string>

#include "bprop/errors.h"

namespace bprop::js {

using emscripten::val;

/// A JavaScript callback threw; its error waits on the JavaScript side.
struct JsCallbackError : std::runtime_error {
  JsCallbackError() : std::runtime_error("a JavaScript callback threw") {}
};

// Error kinds as the wrapper sees them: 0..3 are ErrorKind, then these.
constexpr int kOtherError = 4;
constexpr int kJsError = 5;

inline int g_error_kind = -1;
inline std::string g_error_message;

/// Runs f; on any C++ exception records it and returns undefined.
template <typename F>
val guarded(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    g_error_kind = static_cast<int>(e.kind());
    g_error_message = e.what();
  } catch (const JsCallbackError&) {
    g_error_kind = kJsError;
    g_error_message.clear();
  } catch (const std::bad_alloc&) {
    g_error_kind = kOtherError;
    g_error_message = "out of memory in the WebAssembly heap";
  } catch (const std::exception& e) {
    g_error_kind = kOtherError;
    g_error_message = e.what();
  }
  return val::undefined();
}

inline val error_kind() { return val(g_error_kind); }
inline val take_error() {
  val out = val::object();
  out.set("kind", g_error_kind);
  out.set("message", g_error_message);
  g_error_kind = -1;
  g_error_message.clear();
  return out;
}

}  // namespace bprop::js
