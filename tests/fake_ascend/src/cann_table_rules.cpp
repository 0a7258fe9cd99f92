// Looking up the operator table (cann_table.h) and applying its format rules.
#include <algorithm>

#include "cann_table.h"

namespace fake_ascend {

const OperatorSpec* find_operator(const std::string& op) {
  for (const OperatorSpec& spec : operator_table()) {
    if (op == spec.op) return &spec;
  }
  return nullptr;
}

const ArgSpec* find_arg(const OperatorSpec& op, const std::string& arg) {
  const std::string base = arg.substr(0, arg.find('['));
  for (const ArgSpec& a : op.args) {
    if (base == a.arg) return &a;
  }
  return nullptr;
}

const std::vector<aclDataType>& accepted_dtypes(const ArgSpec& arg, SocProfile soc) {
  static const std::vector<aclDataType> kNone;
  if (soc != SocProfile::AtlasTraining || arg.training.empty()) return arg.a2;
  return arg.training.front() == ACL_DT_UNDEFINED ? kNone : arg.training;
}

const char* format_name(aclFormat format) {
  switch (static_cast<int>(format)) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case 12: return "NC1HWC0_C04";
    case 16: return "HWCN";
    case 27: return "NDHWC";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case 32: return "NDC1HWC0";
    case 33: return "FRACTAL_Z_3D";
    case 35: return "NC";
    case ACL_FORMAT_NCL: return "NCL";
    default: return "an unknown aclFormat";
  }
}

namespace {

bool plain(int f) {
  switch (f) {
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NHWC:
    case ACL_FORMAT_ND:
    case 16:  // HWCN
    case 27:  // NDHWC
    case ACL_FORMAT_NCDHW:
    case 35:  // NC
    case ACL_FORMAT_NCL:
      return true;
    default: return false;
  }
}

bool one_of(int f, std::initializer_list<int> allowed, std::string* expected, const char* text) {
  if (std::find(allowed.begin(), allowed.end(), f) != allowed.end()) return true;
  *expected = text;
  return false;
}

}  // namespace

bool format_accepted(FormatRule rule, aclFormat format, size_t rank, std::string* expected) {
  const int f = static_cast<int>(format);
  constexpr int kNcl = ACL_FORMAT_NCL;
  if (!plain(f)) {
    *expected = "a plain format (ND, NCHW, NHWC, NCDHW, NDHWC, NCL, HWCN, NC)";
    return false;
  }
  switch (rule) {
    case FormatRule::AnyPlain: return true;
    case FormatRule::Nd: return one_of(f, {ACL_FORMAT_ND}, expected, "ND");
    case FormatRule::Channels:
    case FormatRule::ChannelsOrNd3d:
      if (rank == 3) {
        return rule == FormatRule::Channels ? one_of(f, {kNcl}, expected, "NCL for a 3-D tensor")
                                            : one_of(f, {kNcl, ACL_FORMAT_ND}, expected, "NCL or ND for a 3-D tensor");
      }
      if (rank == 4) return one_of(f, {ACL_FORMAT_NCHW}, expected, "NCHW for a 4-D tensor");
      if (rank == 5) return one_of(f, {ACL_FORMAT_NCDHW}, expected, "NCDHW for a 5-D tensor");
      *expected = "a 3-D (NCL), 4-D (NCHW) or 5-D (NCDHW) tensor";
      return false;
    case FormatRule::NchwOrNd:
      if (rank == 4) return one_of(f, {ACL_FORMAT_NCHW, ACL_FORMAT_ND}, expected, "NCHW or ND for a 4-D tensor");
      if (rank == 3) return one_of(f, {kNcl, ACL_FORMAT_ND}, expected, "NCL or ND for a 3-D tensor");
      return true;
    case FormatRule::NchwWhen4d:
      if (rank == 4) return one_of(f, {ACL_FORMAT_NCHW}, expected, "NCHW for a 4-D tensor");
      if (rank == 5) return one_of(f, {ACL_FORMAT_NCDHW}, expected, "NCDHW for a 5-D tensor");
      return true;
  }
  return true;
}

}  // namespace fake_ascend

extern "C" FA_EXPORT bool fake_ascend_documented(const char* op) {
  return op && fake_ascend::find_operator(op) != nullptr;
}
