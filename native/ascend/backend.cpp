// The Ascend backend as the core sees it (bprop::DeviceBackend): registered with the core when the program starts,
// loaded on first use of an Ascend device, when it also registers its kernels with the op registry.
#include "ascend/backend.h"

#include <mutex>

#include "ascend/kernels.h"
#include "ascend/runtime.h"
#include "bprop/device.h"
#include "bprop/registry.h"

namespace bprop::ascend {
namespace {

class AscendBackend final : public DeviceBackend {
 public:
  Backend backend() const override { return ascend::backend(); }
  int device_count() override { return Runtime::get().device_count(); }
  void* allocate(int index, size_t bytes) override { return Runtime::get().device(index).allocate(bytes); }
  void release(int index, void* ptr, size_t) noexcept override {
    if (runtime_finalized()) return;  // freed with the device at exit
    try {
      Runtime::get().device(index).release(ptr);
    } catch (...) {  // (the device existed when the memory was allocated)
    }
  }
  void copy_to_host(int index, void* host, const void* dev, size_t bytes) override {
    Runtime::get().device(index).copy_to_host(host, dev, bytes);
  }
  void copy_from_host(int index, void* dev, const void* host, size_t bytes) override {
    Runtime::get().device(index).copy_from_host(dev, host, bytes);
  }
  void copy_on_device(int index, void* dst, const void* src, size_t bytes) override {
    Runtime::get().device(index).copy_on_device(dst, src, bytes);
  }
  void synchronize(int index) override { Runtime::get().device(index).synchronize(); }
};

// The Atlas training series (the first Ascend 910) has no bfloat16 in any operator: such calls are declined
// (counted) and run on the CPU. float16 and bfloat16 elsewhere run on the NPU, each kernel checking the rest.
KernelFn declining_bfloat16_on_atlas_training(KernelFn kernel) {
  return [kernel = std::move(kernel)](KernelCtx& c) {
    if (Runtime::get().soc() == SocFamily::Ascend910) {
      bool bf16 = c.out_dtype == DType::BFloat16;
      for (const Tensor& t : c.inputs) bf16 = bf16 || (t.defined() && t.dtype() == DType::BFloat16);
      if (bf16) throw KernelDeclined{"bfloat16 is not supported on " + Runtime::get().soc_name() + " (Atlas training series)"};
    }
    kernel(c);
  };
}

DeviceBackend& load_backend() {
  static AscendBackend backend;
  static std::once_flag kernels_registered;
  Runtime& rt = Runtime::get();  // throws, saying why, until CANN loads
  std::call_once(kernels_registered, [&rt] {
    for (DeviceKernel& k : aclnn_kernels()) {
      bool present = rt.lib().has_aclnn(k.aclnn);
      for (const std::string& other : k.also) present = present && rt.lib().has_aclnn(other);
      if (present) {
        registry().set_kernel(k.op, ascend::backend(), declining_bfloat16_on_atlas_training(std::move(k.kernel)));
      }
    }
  });
  return backend;
}

// `bprop devices`: the NPUs, their SoC and the CANN found, or why there are none.
std::vector<std::string> describe() {
  try {
    Runtime& rt = Runtime::get();
    std::vector<std::string> lines = {"ascend: " + std::to_string(rt.device_count()) + " device" +
                                      (rt.device_count() == 1 ? "" : "s") + " (" + rt.soc_name() + "), CANN " +
                                      rt.version() + ", " + rt.lib().runtime_path()};
    for (int i = 0; i < rt.device_count(); ++i) lines.push_back("  ascend:" + std::to_string(i));
    return lines;
  } catch (const std::exception& e) {
    return {std::string("ascend: none (") + e.what() + ")"};
  }
}

// `bprop ops`' column: an op's aclnn kernel (when the installed CANN has that operator), its kernel of ops that
// run there themselves (views and composites), or the CPU kernel with a host round trip.
std::string describe_op(const OpDef& def) {
  static const std::vector<DeviceKernel> kernels = aclnn_kernels();
  for (const auto& k : kernels) {
    if (k.op != def.name) continue;
    std::string ops = "aclnn " + k.aclnn;
    for (const std::string& other : k.also) ops += ", " + other;
    return ops;
  }
  return def.allocates_output ? "cpu fallback" : "composed";
}

}  // namespace

Backend backend() {
  static const Backend id = register_backend({.name = "ascend",
                                              .aliases = {"npu"},
                                              .load = load_backend,
                                              .describe = describe,
                                              .describe_op = describe_op});
  return id;
}

namespace {
// Registers the backend before main, so that device texts and `bprop devices` know it from the start.
[[maybe_unused]] const Backend registered = backend();
}  // namespace

}  // namespace bprop::ascend

// What bprop_native's link options name (-u), so that a static link keeps this file and its registration.
extern "C" void bprop_ascend_backend_linked() {}
