#include "opapi_common.h"

#include "cann_table.h"

#include <algorithm>

namespace fake_ascend {

const char* dtype_name(aclDataType dt) {
  switch (dt) {
    case ACL_DT_UNDEFINED: return "UNDEFINED";
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_INT8: return "INT8";
    case ACL_INT32: return "INT32";
    case ACL_UINT8: return "UINT8";
    case ACL_INT16: return "INT16";
    case ACL_UINT16: return "UINT16";
    case ACL_UINT32: return "UINT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT64: return "UINT64";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_BOOL: return "BOOL";
    case ACL_BF16: return "BFLOAT16";
    default: return "an unknown aclDataType";
  }
}

size_t dtype_size(aclDataType dt) {
  switch (dt) {
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32: return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64: return 8;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16: return 2;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL: return 1;
    default: return 0;
  }
}

bool is_floating(aclDataType dt) { return dt == ACL_FLOAT || dt == ACL_DOUBLE || dt == ACL_FLOAT16 || dt == ACL_BF16; }

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    r[i] = x == 1 ? y : x;
  }
  *out = r;
  return true;
}

static int category(aclDataType d) { return d == ACL_BOOL ? 0 : is_floating(d) ? 2 : 1; }

aclDataType promote(aclDataType a, aclDataType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (category(a) == 2) return a == ACL_DOUBLE || b == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

TDesc broadcast_view(const TDesc& d, const Shape& to) {
  TDesc v = d;
  v.shape = to;
  v.strides.assign(to.size(), 0);
  const size_t lead = to.size() - d.shape.size();
  for (size_t i = 0; i < d.shape.size(); ++i) {
    v.strides[lead + i] = d.shape[i] == 1 && to[lead + i] != 1 ? 0 : d.strides[i];
  }
  return v;
}

void copy_view(const TDesc& src, const TDesc& dst) {
  if (is_floating(src.dtype))
    store(dst, load<double>(src));
  else
    store(dst, load<int64_t>(src));
}

void write_scratch(uint8_t* ws, uint64_t size, const void* data, size_t bytes) {
  if (!ws || !size) return;
  const uint64_t n = std::min<uint64_t>(size, bytes);
  if (n) std::memcpy(ws, data, n);
  for (uint64_t i = n; i < size; ++i) ws[i] = static_cast<uint8_t>(0xA5 ^ (i & 0xFF));
}

float half_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  const float sign = bits & 0x8000 ? -1.0f : 1.0f;
  if (exponent == 0x1F) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

uint16_t half_bits(float v) {
  if (std::isnan(v)) return 0x7E00;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const float a = std::fabs(round_to_half(v));  // a half value (or infinity)
  if (std::isinf(a)) return sign | 0x7C00;
  if (a < 6.103515625e-05f) return sign | static_cast<uint16_t>(a * 16777216.0f);  // subnormal: a multiple of 2^-24
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>((m * 2.0f - 1.0f) * 1024.0f);
}

float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;  // the upper half of a float32
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t bf16_bits(float v) {
  if (std::isnan(v)) return std::signbit(v) ? 0xFFC0 : 0x7FC0;
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const uint32_t dropped = u & 0xFFFF, kept = u >> 16;
  const bool up = dropped > 0x8000 || (dropped == 0x8000 && (kept & 1));  // to nearest, ties to even
  return static_cast<uint16_t>(kept + (up ? 1 : 0));  // (a carry into the exponent is right; 0x7F80 is infinity)
}

float round_to_half(float f) {
  // Round to the nearest half (ties to even), overflow to infinity, then back: what USE_FP16 does to the inputs.
  if (std::isnan(f) || std::isinf(f)) return f;
  const float a = std::fabs(f);
  if (a >= 65520.0f) return std::copysign(INFINITY, f);
  if (a < 6.103515625e-05f) {  // subnormal halves: a multiple of 2^-24
    const float q = std::nearbyint(a * 16777216.0f) / 16777216.0f;
    return std::copysign(q, f);
  }
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): 11 significant bits -> ulp 2^(e - 11)
  const float ulp = std::ldexp(1.0f, e - 11);
  return std::copysign(std::nearbyint(a / ulp) * ulp, f);
}

// ---- Op ----

Op::Op(const char* name, uint64_t* workspace_size, aclOpExecutor** executor)
    : name_(name), workspace_size_(workspace_size), executor_(executor) {
  if (workspace_size_) *workspace_size_ = 0;
  if (executor_) *executor_ = nullptr;
  if (!rt_initialized()) {
    status_ = ACL_ERROR_UNINITIALIZE;
    set_error(std::string(name_) + "GetWorkspaceSize: aclInit has not been called");
    return;
  }
  if (!workspace_size_)
    fail(ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is nullptr");
  else if (!executor_)
    fail(ACLNN_ERR_PARAM_NULLPTR, "executor is nullptr");
}

bool Op::fail(aclnnStatus code, const std::string& message) {
  if (status_ == ACLNN_SUCCESS) {
    status_ = code;
    set_error(std::string(name_) + ": " + message);
  }
  return false;
}

bool Op::check(bool condition, const std::string& message) {
  if (status_) return false;
  return condition || fail(ACLNN_ERR_PARAM_INVALID, message);
}

bool Op::tensor(const aclTensor* t, const char* arg, TDesc* d, bool output, bool optional) {
  if (status_) return false;
  const std::string a = arg;
  d->present = false;
  if (!t) return optional || fail(ACLNN_ERR_PARAM_NULLPTR, a + " is nullptr");
  if (!object_live(Kind::Tensor, t)) {
    return fail(ACLNN_ERR_PARAM_INVALID, a + " (" + hex(t) +
                                             ") is not a live aclTensor (destroyed, or not made by "
                                             "aclCreateTensor)");
  }
  const size_t es = dtype_size(t->dtype);
  if (!es) return fail(ACLNN_ERR_PARAM_INVALID, a + " has an unknown dtype " + std::to_string(t->dtype));
  switch (static_cast<int>(t->format)) {
    case 3:
    case 4:
    case 12:
    case 29:
    case 32:
    case 33:
      return fail(ACLNN_ERR_PARAM_INVALID, a + " has the private format " + std::to_string(t->format) +
                                               "; the fake supports ND, NCHW and the other plain formats only");
    default: break;
  }
  if (t->view.size() > 8) {
    return fail(ACLNN_ERR_PARAM_INVALID, a + " has " + std::to_string(t->view.size()) + " dimensions (at most 8)");
  }
  int64_t n = 1, reach = t->offset;
  for (size_t i = 0; i < t->view.size(); ++i) {
    if (t->view[i] < 0) return fail(ACLNN_ERR_PARAM_INVALID, a + " has a negative dimension: " + shape_str(t->view));
    if (t->strides[i] < 0) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + " has a negative stride: " + shape_str(t->strides));
    }
    if (__builtin_mul_overflow(n, t->view[i], &n)) return fail(ACLNN_ERR_PARAM_INVALID, a + " is too large");
  }
  if (t->offset < 0) return fail(ACLNN_ERR_PARAM_INVALID, a + " has a negative offset " + std::to_string(t->offset));
  int64_t storage = 1;
  for (int64_t s : t->storage) {
    if (s < 0 || __builtin_mul_overflow(storage, s, &storage)) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + " has invalid storageDims " + shape_str(t->storage));
    }
  }
  Range range{0, 0, output};
  if (n > 0) {
    for (size_t i = 0; i < t->view.size(); ++i) reach += (t->view[i] - 1) * t->strides[i];
    if (reach + 1 > storage) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + ": the view (shape " + shape_str(t->view) + ", strides " +
                                               shape_str(t->strides) + ", offset " + std::to_string(t->offset) +
                                               ") reaches element " + std::to_string(reach) + ", past its storage of " +
                                               std::to_string(storage) + " elements (storageDims " +
                                               shape_str(t->storage) + ")");
    }
    const uint64_t data = reinterpret_cast<uint64_t>(t->data);
    if (!data)
      return fail(ACLNN_ERR_PARAM_INVALID, a + " has no data (nullptr) but " + std::to_string(n) + " elements");
    BlockInfo b;
    if (!block_containing(data, &b)) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + ": its data " + hex(data) +
                                               " is not inside a live aclrtMalloc block (a host pointer, freed "
                                               "memory, or never allocated)");
    }
    // CANN's aclCreateTensor documentation: tensorData must be 32-byte aligned (the operators' data moves assume
    // it). A view that starts elsewhere is described by its storage's address and an offset in elements.
    if (data % 32 != 0) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + ": its tensorData " + hex(data) +
                                               " is not 32-byte aligned (CANN requires it: pass the storage's "
                                               "address and the view's offset in elements)");
    }
    const uint64_t room = b.size - (data - b.begin);
    const uint64_t view_bytes = static_cast<uint64_t>(reach + 1) * es;
    if (view_bytes > room) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + ": the view (offset " + std::to_string(t->offset) + " + element " +
                                               std::to_string(reach - t->offset) + " of " + dtype_name(t->dtype) +
                                               ") ends " + std::to_string(view_bytes - room) +
                                               " bytes past the end of its " + std::to_string(b.size) +
                                               "-byte aclrtMalloc block at " + hex(b.begin));
    }
    const uint64_t storage_bytes = static_cast<uint64_t>(storage) * es;
    if (storage_bytes > room) {
      return fail(ACLNN_ERR_PARAM_INVALID, a + ": its storage (storageDims " + shape_str(t->storage) + " of " +
                                               dtype_name(t->dtype) + " = " + std::to_string(storage_bytes) +
                                               " bytes from " + hex(data) + ") runs past the end of its " +
                                               std::to_string(b.size) + "-byte aclrtMalloc block at " + hex(b.begin));
    }
    if (output) {
      for (size_t i = 0; i < t->view.size(); ++i) {
        if (t->view[i] > 1 && t->strides[i] == 0) {
          return fail(ACLNN_ERR_PARAM_INVALID, a +
                                                   " is an output with overlapping elements (stride 0 over a "
                                                   "dimension of size " +
                                                   std::to_string(t->view[i]) + ")");
        }
      }
    }
    range = Range{data + static_cast<uint64_t>(t->offset) * es, data + view_bytes, output};
    ranges_.push_back(range);
  }
  if (!documented(a, t->dtype, t->format, t->view.size())) return false;
  refs_.push_back(t);
  d->shape = t->view;
  d->strides = t->strides;
  d->offset = t->offset;
  d->dtype = t->dtype;
  d->data = reinterpret_cast<uint64_t>(t->data);
  d->present = true;
  return true;
}

bool Op::scalar(const aclScalar* s, const char* arg, ScalarValue* v) {
  if (status_) return false;
  if (!s) return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(arg) + " is nullptr");
  if (!object_live(Kind::Scalar, s)) {
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(arg) + " is not a live aclScalar");
  }
  v->dtype = s->dtype;
  if (s->dtype == ACL_FLOAT16 || s->dtype == ACL_BF16) {
    return fail(ACLNN_ERR_PARAM_INVALID,
                std::string(arg) + " dtype " + dtype_name(s->dtype) + " is supported by CANN but not by the fake");
  }
  v->floating = is_floating(s->dtype);
  if (v->floating)
    v->f = read_as<double>(s->bytes, s->dtype);
  else
    v->i = read_as<int64_t>(s->bytes, s->dtype);
  refs_.push_back(s);
  return true;
}

bool Op::int_array(const aclIntArray* a, const char* arg, std::vector<int64_t>* v, bool optional) {
  if (status_) return false;
  if (!a) {
    v->clear();
    return optional || fail(ACLNN_ERR_PARAM_NULLPTR, std::string(arg) + " is nullptr");
  }
  if (!object_live(Kind::IntArray, a)) {
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(arg) + " is not a live aclIntArray");
  }
  *v = a->values;
  refs_.push_back(a);
  return true;
}

bool Op::bool_array(const aclBoolArray* a, const char* arg, std::vector<bool>* v) {
  if (status_) return false;
  if (!a) return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(arg) + " is nullptr");
  if (!object_live(Kind::BoolArray, a)) {
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(arg) + " is not a live aclBoolArray");
  }
  v->assign(a->values.begin(), a->values.end());
  refs_.push_back(a);
  return true;
}

bool Op::tensor_list(const aclTensorList* l, const char* arg, std::vector<TDesc>* v) {
  if (status_) return false;
  v->clear();
  if (!l) return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(arg) + " is nullptr");
  if (!object_live(Kind::TensorList, l)) {
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(arg) + " (" + hex(l) +
                                             ") is not a live aclTensorList (destroyed, or not made by "
                                             "aclCreateTensorList)");
  }
  refs_.push_back(l);
  for (size_t i = 0; i < l->tensors.size(); ++i) {
    const std::string name = std::string(arg) + "[" + std::to_string(i) + "]";
    TDesc d;
    if (!tensor(l->tensors[i], name.c_str(), &d, false)) return false;
    v->push_back(d);
  }
  return true;
}

namespace {
std::string dtype_list(const std::vector<aclDataType>& list) {
  std::string r;
  for (aclDataType d : list) r += std::string(r.empty() ? "" : ", ") + dtype_name(d);
  return r;
}
bool listed(const std::vector<aclDataType>& list, aclDataType dt) {
  return std::find(list.begin(), list.end(), dt) != list.end();
}
std::string on_this_soc() {
  return std::string(" on ") + rt_soc_name() + ", " + soc_profile_name(rt_soc_profile());
}
}  // namespace

bool Op::documented(const std::string& arg, aclDataType dt, aclFormat format, size_t rank) {
  const OperatorSpec* spec = find_operator(name_);
  if (!spec) {
    return fail(ACLNN_ERR_INNER, "the fake's operator table (tests/fake_ascend/src/cann_table.cpp) has no row for "
                                 "this operator: add what CANN documents for it first");
  }
  const ArgSpec* row = find_arg(*spec, arg);
  if (!row) {
    return fail(ACLNN_ERR_INNER, "the fake's operator table has no row for the argument " + arg);
  }
  const std::vector<aclDataType>& accepted = accepted_dtypes(*row, rt_soc_profile());
  if (accepted.empty()) return fail(ACLNN_ERR_PARAM_INVALID, arg + ": the operator is not supported" + on_this_soc());
  if (!listed(accepted, dt)) {
    return fail(ACLNN_ERR_PARAM_INVALID, arg + " dtype " + dtype_name(dt) + " is not supported" + on_this_soc() +
                                             " (supported: " + dtype_list(accepted) + ")");
  }
  std::string expected;
  if (!format_accepted(row->formats, format, rank, &expected)) {
    return fail(ACLNN_ERR_PARAM_INVALID, arg + " format " + format_name(format) + " is not supported for a " +
                                             std::to_string(rank) + "-D tensor (expected " + expected + ")");
  }
  return true;
}

bool Op::dtype(const char* arg, aclDataType dt, std::initializer_list<aclDataType> fake) {
  if (status_) return false;
  if (const OperatorSpec* spec = find_operator(name_)) {
    if (const ArgSpec* row = find_arg(*spec, arg)) {
      const std::vector<aclDataType>& accepted = accepted_dtypes(*row, rt_soc_profile());
      if (!listed(accepted, dt)) {
        return fail(ACLNN_ERR_PARAM_INVALID, std::string(arg) + " dtype " + dtype_name(dt) + " is not supported" +
                                                 on_this_soc() + " (supported: " + dtype_list(accepted) + ")");
      }
    }
  }
  if (listed(std::vector<aclDataType>(fake), dt)) return true;
  return fail(ACLNN_ERR_PARAM_INVALID, std::string(arg) + " dtype " + dtype_name(dt) +
                                           " is supported by CANN but not by the fake (the fake supports: " +
                                           dtype_list(std::vector<aclDataType>(fake)) + ")");
}

// What CANN's cube operators accept as cubeMathType (0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16,
// 3 USE_HF32, 4 FORCE_GRP_ACC_FOR_FP32):
//  - the values: 0 to 4 for Matmul and Convolution, 0 to 3 for ConvolutionBackward and AvgPool2dBackward, 0 to 2 for
//    AvgPool2d (ops-nn matmul/common/op_host/op_api/cube_util.cpp CheckCubeMathType; aclnn_avgpool2d.cpp: USE_HF32
//    "not supported");
//  - the Atlas training series has no float32 cube: FLOAT with 0 or 3 is refused (it computes float32 in float16 only
//    when 1 or 2 allows it), for every one of them (cube_util.cpp; aclnn_matmul.cpp's own check says the same;
//    AvgPool2dBackward's documentation, its source only checks the range);
//  - the Atlas A2 training series' AvgPool2d refuses FLOAT with 1 ("cannot support hf32", aclnn_avgpool2d.cpp).
bool Op::cube_math_type(int8_t cube, aclDataType dt) {
  if (status_) return false;
  const std::string op = name_;
  const int highest = op == "aclnnAvgPool2d" ? 2 : op == "aclnnMatmul" || op == "aclnnConvolution" ? 4 : 3;
  if (cube < 0 || cube > highest) {
    return fail(ACLNN_ERR_PARAM_INVALID, "cubeMathType " + std::to_string(cube) + " is not between 0 and " +
                                             std::to_string(highest) +
                                             " (0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32" +
                                             (highest == 4 ? ", 4 FORCE_GRP_ACC_FOR_FP32)" : ")"));
  }
  if (dt == ACL_FLOAT && (cube == 0 || cube == 3) && rt_soc_profile() == SocProfile::AtlasTraining) {
    return fail(ACLNN_ERR_PARAM_INVALID, "cubeMathType " + std::to_string(cube) + " with FLOAT input is not supported" +
                                             on_this_soc() + ", whose cube unit has no float32: pass 1 "
                                             "(ALLOW_FP32_DOWN_PRECISION) or 2 (USE_FP16) to compute in float16");
  }
  if (dt == ACL_FLOAT && cube == 1 && op == "aclnnAvgPool2d" && rt_soc_profile() == SocProfile::AtlasA2Training) {
    return fail(ACLNN_ERR_PARAM_INVALID, "cubeMathType 1 (ALLOW_FP32_DOWN_PRECISION) with FLOAT input is not supported" +
                                             on_this_soc() + " (average pooling cannot support HF32)");
  }
  return true;
}

bool Op::dtype_is(const char* arg, const TDesc& t, aclDataType expected) {
  return check(t.dtype == expected,
               std::string(arg) + " dtype " + dtype_name(t.dtype) + " should be " + dtype_name(expected));
}

bool Op::shape_is(const char* arg, const TDesc& t, const Shape& expected) {
  return check(t.shape == expected,
               std::string(arg) + " shape " + shape_str(t.shape) + " should be " + shape_str(expected));
}

bool Op::axis(const char* arg, int64_t dim, size_t rank, int64_t* out) {
  const int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (!check(dim >= -r && dim < r, std::string(arg) + " " + std::to_string(dim) + " is out of range for a " +
                                       std::to_string(rank) + "-d tensor")) {
    return false;
  }
  *out = dim < 0 ? dim + r : dim;
  return true;
}

aclnnStatus Op::finish(uint64_t workspace, Kernel kernel) {
  if (status_) return status_;
  ExecutorSpec spec;
  spec.op = name_;
  spec.workspace = workspace;
  spec.refs = std::move(refs_);
  spec.ranges = std::move(ranges_);
  spec.kernel = std::move(kernel);
  *executor_ = create_executor(std::move(spec));
  *workspace_size_ = workspace;
  return ACLNN_SUCCESS;
}

}  // namespace fake_ascend
