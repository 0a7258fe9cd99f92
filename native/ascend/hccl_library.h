// HCCL's libhccl.so, loaded with dlopen when bprop::dist starts its HCCL implementation: by plain name, then in the
// CANN directories (acl_library.h's search order), with the same kind of error when it is missing.
#pragma once
#include <string>

#include "ascend/hccl_api.h"

namespace bprop::ascend {

struct HcclFunctions {
  hccl::HcclGetRootInfo_t HcclGetRootInfo;
  hccl::HcclCommInitRootInfo_t HcclCommInitRootInfo;
  hccl::HcclAllReduce_t HcclAllReduce;
  hccl::HcclBroadcast_t HcclBroadcast;
  hccl::HcclCommDestroy_t HcclCommDestroy;
  hccl::HcclGetErrorString_t HcclGetErrorString;  // optional: may be null
};

class HcclLibrary {
 public:
  /// The library, loaded on first use; ValueError naming every path tried and the usual cause when it does not
  /// load, or the function it lacks.
  static HcclLibrary& get();
  const HcclFunctions& fn() const { return fn_; }
  const std::string& path() const { return path_; }
  /// "HCCL_E_PARA (1): parameter error" for a failed call.
  std::string describe(hccl::HcclResult code) const;

 private:
  HcclLibrary();
  HcclFunctions fn_{};
  std::string path_;
};

}  // namespace bprop::ascend
