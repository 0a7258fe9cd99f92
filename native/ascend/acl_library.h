// CANN's libraries, loaded with dlopen at first use: the runtime (libascendcl.so), the operator-argument library
// (libnnopbase.so) and the aclnn operators (libopapi.so and every split library libopapi_*.so beside the runtime
// or in a CANN directory). Looked for by plain name (LD_LIBRARY_PATH, as CANN's set_env.sh sets it), then in
// $ASCEND_HOME_PATH/lib64, $ASCEND_TOOLKIT_HOME/lib64, /usr/local/Ascend/ascend-toolkit/latest/lib64 and
// /usr/local/Ascend/cann/lib64.
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ascend/acl_api.h"

namespace bprop::ascend {

/// The resolved functions of the runtime and of libnnopbase.
struct AclFunctions {
  acl::aclInit_t aclInit;
  acl::aclFinalize_t aclFinalize;
  acl::aclrtSetDevice_t aclrtSetDevice;
  acl::aclrtResetDevice_t aclrtResetDevice;
  acl::aclrtGetDeviceCount_t aclrtGetDeviceCount;
  acl::aclrtCreateStream_t aclrtCreateStream;
  acl::aclrtDestroyStream_t aclrtDestroyStream;
  acl::aclrtSynchronizeStream_t aclrtSynchronizeStream;
  acl::aclrtMalloc_t aclrtMalloc;
  acl::aclrtFree_t aclrtFree;
  acl::aclrtMemcpy_t aclrtMemcpy;
  acl::aclrtMemcpyAsync_t aclrtMemcpyAsync;
  acl::aclrtGetMemInfo_t aclrtGetMemInfo;
  acl::aclrtGetVersion_t aclrtGetVersion;  // optional (older runtimes): may be null
  acl::aclrtGetSocName_t aclrtGetSocName;  // optional
  acl::aclGetRecentErrMsg_t aclGetRecentErrMsg;
  acl::aclCreateTensor_t aclCreateTensor;
  acl::aclDestroyTensor_t aclDestroyTensor;
  acl::aclCreateScalar_t aclCreateScalar;
  acl::aclDestroyScalar_t aclDestroyScalar;
  acl::aclCreateIntArray_t aclCreateIntArray;
  acl::aclDestroyIntArray_t aclDestroyIntArray;
  acl::aclCreateBoolArray_t aclCreateBoolArray;
  acl::aclDestroyBoolArray_t aclDestroyBoolArray;
  acl::aclCreateTensorList_t aclCreateTensorList;
  acl::aclDestroyTensorList_t aclDestroyTensorList;
};

/// One aclnn operator's two entry points (the first's signature depends on the operator).
struct AclnnPair {
  void* get_workspace_size = nullptr;
  acl::aclnnLaunch_t launch = nullptr;
};

class AclLibrary {
 public:
  /// Loads the libraries and resolves the runtime's functions; bprop::ValueError saying which library or symbol is
  /// missing, dlerror() and the usual cause, when that fails.
  AclLibrary();
  const AclFunctions& fn() const { return fn_; }
  /// aclnn<name>GetWorkspaceSize and aclnn<name> (resolved once); UnknownOpError naming them when absent.
  AclnnPair aclnn(const std::string& name);
  /// True when aclnn<name> exists in the installed operator library.
  bool has_aclnn(const std::string& name);
  /// Where the runtime was found, and the toolkit's version when the installation says it.
  const std::string& runtime_path() const { return runtime_path_; }
  std::string toolkit_version() const;
  /// aclGetRecentErrMsg(), or "" when there is none.
  std::string recent_error() const;
  /// The operator libraries loaded, in the order operators are looked up in them.
  const std::vector<std::string>& operator_libraries() const { return operator_libraries_; }

 private:
  void load_operator_libraries(const std::string& runtime_path);
  AclFunctions fn_{};
  std::string runtime_path_;
  std::vector<void*> opapi_;  // the operator libraries' handles
  std::vector<std::string> operator_libraries_;
  std::mutex mutex_;
  std::map<std::string, AclnnPair> pairs_;
};

/// The directories searched after the plain names, in order (environment variables that are set only).
std::vector<std::string> cann_library_dirs();

/// Another CANN library (libhccl.so, say) loaded as the runtime is: by plain name, then in cann_library_dirs().
struct CannLibrary {
  void* handle = nullptr;  // nullptr when it did not load
  std::string path;
};
/// Each failed attempt's dlerror() is appended to `errors` (a line per path).
CannLibrary open_cann_library(const std::string& name, std::string& errors);
/// Why a CANN library did not load, in the words a user can act on (from the collected errors).
std::string cann_load_hint(const std::string& errors);

}  // namespace bprop::ascend
