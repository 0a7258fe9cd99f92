// What every fake aclnn operator shares: argument checking (Op), tensor views (TDesc) and the copies between device
// tensors and contiguous host vectors that the kernels compute on.
#pragma once
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core.h"

namespace fake_ascend {

using Shape = std::vector<int64_t>;

const char* dtype_name(aclDataType dt);
size_t dtype_size(aclDataType dt);  // 0 for a type the fake does not know
bool is_floating(aclDataType dt);   // FLOAT, DOUBLE, FLOAT16, BF16
std::string shape_str(const Shape& s);
int64_t numel_of(const Shape& s);
Shape contiguous_strides(const Shape& s);
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out);
/// PyTorch's promotion between two tensors (over the dtypes the fake computes): BOOL < integers < floating.
aclDataType promote(aclDataType a, aclDataType b);

/// A tensor as a kernel sees it: captured by value when the executor is made, so destroying the aclTensor after
/// the launch is harmless (the device memory it describes must live until the stream ran).
struct TDesc {
  Shape shape, strides;
  int64_t offset = 0;
  aclDataType dtype = ACL_FLOAT;
  uint64_t data = 0;  // device address of the storage
  bool present = false;
  int64_t numel() const { return numel_of(shape); }
  size_t ndim() const { return shape.size(); }
};

/// `d` seen with shape `to` (NumPy broadcasting: stride 0 where it is expanded).
TDesc broadcast_view(const TDesc& d, const Shape& to);

// ---- element conversions ----
// FLOAT16 and BF16 elements: their values, and the bits of a float32 value rounded to nearest (ties to even),
// overflowing to infinity. A kernel computes in double and stores through float32, as the device's vector unit
// computes a half operator in float32 and rounds once to the output's dtype.
float half_value(uint16_t bits);
uint16_t half_bits(float v);
float bf16_value(uint16_t bits);
uint16_t bf16_bits(float v);

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return 0;
    if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <class T, class S>
T read_one(const uint8_t* p) {
  S v;
  std::memcpy(&v, p, sizeof v);
  return convert<T>(v);
}

template <class T>
T read_as(const uint8_t* p, aclDataType dt) {
  switch (dt) {
    case ACL_FLOAT: return read_one<T, float>(p);
    case ACL_DOUBLE: return read_one<T, double>(p);
    case ACL_INT8: return read_one<T, int8_t>(p);
    case ACL_UINT8: return read_one<T, uint8_t>(p);
    case ACL_INT16: return read_one<T, int16_t>(p);
    case ACL_UINT16: return read_one<T, uint16_t>(p);
    case ACL_INT32: return read_one<T, int32_t>(p);
    case ACL_UINT32: return read_one<T, uint32_t>(p);
    case ACL_INT64: return read_one<T, int64_t>(p);
    case ACL_UINT64: return read_one<T, uint64_t>(p);
    case ACL_BOOL: return static_cast<T>(*p != 0);
    case ACL_FLOAT16:
    case ACL_BF16: {
      uint16_t b;
      std::memcpy(&b, p, sizeof b);
      return convert<T>(dt == ACL_FLOAT16 ? half_value(b) : bf16_value(b));
    }
    default: return T{};
  }
}

template <class S, class T>
void write_one(uint8_t* p, T v) {
  const S s = convert<S>(v);
  std::memcpy(p, &s, sizeof s);
}

template <class T>
void write_as(uint8_t* p, aclDataType dt, T v) {
  switch (dt) {
    case ACL_FLOAT: write_one<float>(p, v); break;
    case ACL_DOUBLE: write_one<double>(p, v); break;
    case ACL_INT8: write_one<int8_t>(p, v); break;
    case ACL_UINT8: write_one<uint8_t>(p, v); break;
    case ACL_INT16: write_one<int16_t>(p, v); break;
    case ACL_UINT16: write_one<uint16_t>(p, v); break;
    case ACL_INT32: write_one<int32_t>(p, v); break;
    case ACL_UINT32: write_one<uint32_t>(p, v); break;
    case ACL_INT64: write_one<int64_t>(p, v); break;
    case ACL_UINT64: write_one<uint64_t>(p, v); break;
    case ACL_BOOL: *p = v != T(0) ? 1 : 0; break;
    case ACL_FLOAT16:
    case ACL_BF16: {
      const float f = static_cast<float>(v);
      const uint16_t b = dt == ACL_FLOAT16 ? half_bits(f) : bf16_bits(f);
      std::memcpy(p, &b, sizeof b);
      break;
    }
    default: break;
  }
}

/// Calls f(i, element_offset) for the elements of `d` in row-major order.
template <class F>
void for_each_element(const TDesc& d, F&& f) {
  const int64_t n = d.numel();
  if (n == 0) return;
  const size_t nd = d.ndim();
  std::vector<int64_t> idx(nd, 0);
  int64_t off = d.offset;
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (size_t k = nd; k-- > 0;) {
      if (++idx[k] < d.shape[k]) {
        off += d.strides[k];
        break;
      }
      off -= d.strides[k] * (d.shape[k] - 1);
      idx[k] = 0;
    }
  }
}

/// The elements of a device tensor (view), row-major, as T.
template <class T>
std::vector<T> load(const TDesc& d) {
  std::vector<T> v(static_cast<size_t>(d.numel()));
  if (v.empty()) return v;
  const uint8_t* base = host_view(d.data);
  const size_t es = dtype_size(d.dtype);
  for_each_element(d, [&](int64_t i, int64_t off) { v[i] = read_as<T>(base + off * es, d.dtype); });
  return v;
}

/// Writes row-major values into a device tensor (view), converting to its dtype.
template <class T>
void store(const TDesc& d, const std::vector<T>& v) {
  if (d.numel() == 0) return;
  uint8_t* base = host_view(d.data);
  const size_t es = dtype_size(d.dtype);
  for_each_element(d, [&](int64_t i, int64_t off) { write_as<T>(base + off * es, d.dtype, v[i]); });
}

/// Copies (converting the dtype) the elements of `src` into `dst`, views of the same shape.
void copy_view(const TDesc& src, const TDesc& dst);

/// Scratch data a kernel leaves in its workspace (its intermediate results, then a fill pattern).
void write_scratch(uint8_t* ws, uint64_t size, const void* data, size_t bytes);

/// float -> nearest IEEE half -> float (cubeMathType USE_FP16).
float round_to_half(float f);

struct ScalarValue {
  aclDataType dtype = ACL_FLOAT;
  double f = 0;
  int64_t i = 0;
  bool floating = false;
  template <class T>
  T as() const {
    if constexpr (std::is_floating_point_v<T>)
      return floating ? static_cast<T>(f) : static_cast<T>(i);
    else
      return floating ? convert<T>(f) : static_cast<T>(i);
  }
};

/// One aclnnXxxGetWorkspaceSize call: every check records "<op>: <what is wrong>" as the recent error message and
/// the status code, and returns false; once one failed, the rest return false at once.
class Op {
 public:
  Op(const char* name, uint64_t* workspace_size, aclOpExecutor** executor);
  const char* name() const { return name_; }
  aclnnStatus status() const { return status_; }
  bool fail(aclnnStatus code, const std::string& message);

  /// A tensor argument: a live aclTensor whose view lies in its storage and whose bytes lie in one live
  /// aclrtMalloc block. `optional`: nullptr is allowed (then d->present is false).
  bool tensor(const aclTensor* t, const char* arg, TDesc* d, bool output, bool optional = false);
  bool scalar(const aclScalar* s, const char* arg, ScalarValue* v);
  bool int_array(const aclIntArray* a, const char* arg, std::vector<int64_t>* v, bool optional = false);
  bool bool_array(const aclBoolArray* a, const char* arg, std::vector<bool>* v);
  /// A live aclTensorList of non-null tensors, each checked as tensor() checks an input ("tensors[i]").
  bool tensor_list(const aclTensorList* l, const char* arg, std::vector<TDesc>* v);
  /// dt must be one the operator table lists for `arg` on this SoC (when it has a row for it: a tensor's was
  /// checked by tensor() already) and one of `fake`, the dtypes the fake computes.
  bool dtype(const char* arg, aclDataType dt, std::initializer_list<aclDataType> fake);
  bool dtype_is(const char* arg, const TDesc& t, aclDataType expected);
  bool shape_is(const char* arg, const TDesc& t, const Shape& expected);
  /// cubeMathType of a cube operator (Matmul, Convolution, ConvolutionBackward, AvgPool2d, AvgPool2dBackward) for
  /// inputs of dtype `dt`, as CANN checks it on the SoC the fake plays (opapi_common.cpp says where from).
  bool cube_math_type(int8_t cube, aclDataType dt);
  /// dim in [-rank, rank) (a 0-d tensor takes 0 and -1) -> [0, rank).
  bool axis(const char* arg, int64_t dim, size_t rank, int64_t* out);
  bool check(bool condition, const std::string& message);

  /// Makes the executor (when every check passed) and reports the workspace size.
  aclnnStatus finish(uint64_t workspace, Kernel kernel);

 private:
  /// What the operator table (cann_table.h) says of a tensor argument: its dtype on this SoC and its format at
  /// its rank.
  bool documented(const std::string& arg, aclDataType dt, aclFormat format, size_t rank);
  const char* name_;
  uint64_t* workspace_size_;
  aclOpExecutor** executor_;
  aclnnStatus status_ = ACLNN_SUCCESS;
  std::vector<const void*> refs_;
  std::vector<Range> ranges_;
};

/// The standard launch entry point aclnn<Name>(workspace, workspaceSize, executor, stream).
#define FAKE_ACLNN_LAUNCH_FN(Name)                                                                               \
  extern "C" FA_EXPORT aclnnStatus aclnn##Name(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, \
                                               aclrtStream stream) {                                             \
    return fake_ascend::launch("aclnn" #Name, workspace, workspaceSize, executor, stream);                       \
  }

}  // namespace fake_ascend
