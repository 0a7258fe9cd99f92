#include "ascend/acl_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "bprop/errors.h"

namespace bprop::ascend {
namespace {

// Why a CANN library did not load, in the words a user can act on.
std::string usual_cause(const std::string& errors) {
  if (errors.find("libascend_hal") != std::string::npos) {
    return "the NPU driver's libascend_hal.so is missing: install the Ascend driver (it lives in "
           "/usr/local/Ascend/driver/lib64) and add it to LD_LIBRARY_PATH";
  }
  return "CANN is not installed, or its environment is not set: run `source "
         "/usr/local/Ascend/ascend-toolkit/set_env.sh` (or set ASCEND_HOME_PATH to the toolkit) first";
}

struct Loaded {
  void* handle = nullptr;
  std::string path;
};

// dlopen of `name` by plain name, then in every CANN directory; `errors` collects each dlerror().
Loaded open_library(const std::string& name, std::string& errors) {
  std::vector<std::string> candidates{name};
  for (const std::string& dir : cann_library_dirs()) candidates.push_back(dir + "/" + name);
  for (const std::string& path : candidates) {
    dlerror();
    if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return {h, path};
    const char* m = dlerror();
    const std::string e = m ? m : "";
    errors += "\n  " + (e.rfind(path, 0) == 0 ? e : path + ": " + (e.empty() ? "unknown error" : e));
  }
  return {};
}

template <typename F>
void resolve(void* handle, const char* library, const char* symbol, F& out, bool required = true) {
  dlerror();
  out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!out && required) {
    const char* e = dlerror();
    throw ValueError(std::string("The Ascend backend: ") + library + " has no function " + symbol + " (" +
                     (e ? e : "not found") + "); this CANN is older than the backend needs (8.0 or newer)");
  }
}

// The split operator libraries (libopapi_math.so, libopapi_nn.so, libopapi_cv.so, libopapi_transformer.so, ...)
// in `dir`, sorted by name.
std::vector<std::string> split_operator_libraries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libopapi_", 0) == 0 && name.size() > 12 && name.compare(name.size() - 3, 3, ".so") == 0) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> cann_library_dirs() {
  std::vector<std::string> dirs;
  for (const char* var : {"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) {
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64");
  }
  dirs.push_back("/usr/local/Ascend/ascend-toolkit/latest/lib64");
  dirs.push_back("/usr/local/Ascend/cann/lib64");
  return dirs;
}

CannLibrary open_cann_library(const std::string& name, std::string& errors) {
  const Loaded l = open_library(name, errors);
  return {l.handle, l.path};
}

std::string cann_load_hint(const std::string& errors) { return usual_cause(errors); }

AclLibrary::AclLibrary() {
  std::string errors;
  const Loaded rt = open_library("libascendcl.so", errors);
  if (!rt.handle) {
    throw ValueError("The Ascend backend cannot load libascendcl.so: " + usual_cause(errors) + ". Tried:" + errors);
  }
  runtime_path_ = rt.path;
  const Loaded base = open_library("libnnopbase.so", errors);
  if (!base.handle) {
    throw ValueError("The Ascend backend cannot load libnnopbase.so (CANN's operator library base): " +
                     usual_cause(errors) + ". Tried:" + errors);
  }
  load_operator_libraries(rt.path);
  void* r = rt.handle;
  const char* rl = "libascendcl.so";
  resolve(r, rl, "aclInit", fn_.aclInit);
  resolve(r, rl, "aclFinalize", fn_.aclFinalize);
  resolve(r, rl, "aclrtSetDevice", fn_.aclrtSetDevice);
  resolve(r, rl, "aclrtResetDevice", fn_.aclrtResetDevice);
  resolve(r, rl, "aclrtGetDeviceCount", fn_.aclrtGetDeviceCount);
  resolve(r, rl, "aclrtCreateStream", fn_.aclrtCreateStream);
  resolve(r, rl, "aclrtDestroyStream", fn_.aclrtDestroyStream);
  resolve(r, rl, "aclrtSynchronizeStream", fn_.aclrtSynchronizeStream);
  resolve(r, rl, "aclrtMalloc", fn_.aclrtMalloc);
  resolve(r, rl, "aclrtFree", fn_.aclrtFree);
  resolve(r, rl, "aclrtMemcpy", fn_.aclrtMemcpy);
  resolve(r, rl, "aclrtMemcpyAsync", fn_.aclrtMemcpyAsync);
  resolve(r, rl, "aclrtGetMemInfo", fn_.aclrtGetMemInfo);
  resolve(r, rl, "aclrtGetVersion", fn_.aclrtGetVersion, false);
  resolve(r, rl, "aclrtGetSocName", fn_.aclrtGetSocName, false);
  resolve(r, rl, "aclGetRecentErrMsg", fn_.aclGetRecentErrMsg);
  void* b = base.handle;
  const char* bl = "libnnopbase.so";
  resolve(b, bl, "aclCreateTensor", fn_.aclCreateTensor);
  resolve(b, bl, "aclDestroyTensor", fn_.aclDestroyTensor);
  resolve(b, bl, "aclCreateScalar", fn_.aclCreateScalar);
  resolve(b, bl, "aclDestroyScalar", fn_.aclDestroyScalar);
  resolve(b, bl, "aclCreateIntArray", fn_.aclCreateIntArray);
  resolve(b, bl, "aclDestroyIntArray", fn_.aclDestroyIntArray);
  resolve(b, bl, "aclCreateBoolArray", fn_.aclCreateBoolArray);
  resolve(b, bl, "aclDestroyBoolArray", fn_.aclDestroyBoolArray);
  resolve(b, bl, "aclCreateTensorList", fn_.aclCreateTensorList);
  resolve(b, bl, "aclDestroyTensorList", fn_.aclDestroyTensorList);
}

// Every split operator library (libopapi_math.so, libopapi_nn.so, libopapi_cv.so, libopapi_transformer.so: one
// per operator repository, as CANN ships them from 8.1 on), then libopapi.so, the single library of earlier
// releases, which CANN is retiring. An operator is taken from the first library that has it: the order torch_npu
// looks operators up in.
void AclLibrary::load_operator_libraries(const std::string& runtime_path) {
  std::string errors;
  std::vector<std::string> dirs;
  if (const size_t slash = runtime_path.rfind('/'); slash != std::string::npos) {
    dirs.push_back(runtime_path.substr(0, slash));
  }
  for (const std::string& dir : cann_library_dirs()) dirs.push_back(dir);
  std::vector<std::string> names;
  for (const std::string& dir : dirs) {
    for (const std::string& name : split_operator_libraries(dir)) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  names.push_back("libopapi.so");
  for (const std::string& name : names) {
    if (Loaded lib = open_library(name, errors); lib.handle) {
      opapi_.push_back(lib.handle);
      operator_libraries_.push_back(lib.path);
    }
  }
  if (opapi_.empty()) {
    throw ValueError("The Ascend backend cannot load the aclnn operators (libopapi.so or the split libraries "
                     "libopapi_*.so): " + usual_cause(errors) + ". Tried:" + errors);
  }
}

AclnnPair AclLibrary::aclnn(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = pairs_.find(name); it != pairs_.end()) {
    if (!it->second.launch) throw UnknownOpError("The installed CANN has no aclnn" + name);
    return it->second;
  }
  AclnnPair pair;
  const std::string ws = "aclnn" + name + "GetWorkspaceSize", launch = "aclnn" + name;
  for (void* h : opapi_) {
    void* w = dlsym(h, ws.c_str());
    void* l = dlsym(h, launch.c_str());
    if (w && l) {
      pair.get_workspace_size = w;
      pair.launch = reinterpret_cast<acl::aclnnLaunch_t>(l);
      break;
    }
  }
  pairs_[name] = pair;
  if (!pair.launch) throw UnknownOpError("The installed CANN has no " + launch + " / " + ws);
  return pair;
}

bool AclLibrary::has_aclnn(const std::string& name) {
  try {
    aclnn(name);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string AclLibrary::toolkit_version() const {
  // <toolkit>/ascend_toolkit_install.info next to lib64 holds "version=8.0.RC3" on CANN installations.
  const size_t slash = runtime_path_.rfind("/lib64/");
  std::vector<std::string> files;
  if (slash != std::string::npos) files.push_back(runtime_path_.substr(0, slash) + "/ascend_toolkit_install.info");
  for (const std::string& dir : cann_library_dirs()) files.push_back(dir + "/../ascend_toolkit_install.info");
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("version=", 0) == 0) return line.substr(8);
    }
  }
  return "";
}

std::string AclLibrary::recent_error() const {
  const char* m = fn_.aclGetRecentErrMsg ? fn_.aclGetRecentErrMsg() : nullptr;
  return m ? m : "";
}

}  // namespace bprop::ascend
