// The Ascend NPU as a registered device backend (bprop/device.h): its id and devices. The registration happens
// when the native library is linked (a static registrar in backend.cpp; bprop_native's link options keep it).
#pragma once
#include "bprop/tensor.h"

namespace bprop::ascend {

/// The Ascend backend's id in the backend registry.
Backend backend();
/// NPU `index` ("ascend:N").
inline Device device(int index = 0) { return Device{backend(), index}; }

}  // namespace bprop::ascend
