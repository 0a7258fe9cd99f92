// What CANN documents about each operator's tensor arguments, one row per argument: the dtypes it accepts on each
// product line and the formats it accepts at each rank, with the source each row was read from. The fake checks
// every tensor argument of every operator against it at GetWorkspaceSize (Op::tensor), independently of what the
// fake itself can compute (Op::dtype), and refuses an operator that has no rows: a new fake operator starts here.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "core.h"

namespace fake_ascend {

/// Which aclFormat values an argument accepts, by rank. CANN's operators name the layout of a tensor in its
/// aclFormat; the elementwise, reduction and layout operators treat every plain format alike, while the
/// convolution, pooling and normalisation operators check that a feature map names its channel layout.
enum class FormatRule {
  AnyPlain,        ///< any plain format at any rank (CANN documents ND and does not check)
  Nd,              ///< ND only
  Channels,        ///< 3-D: NCL, 4-D: NCHW, 5-D: NCDHW (ND refused), other ranks refused
  ChannelsOrNd3d,  ///< as Channels, but a 3-D tensor may also be ND
  NchwOrNd,        ///< 4-D: NCHW or ND; 3-D: NCL or ND
  NchwWhen4d,      ///< 4-D: NCHW, 5-D: NCDHW; other ranks any plain format
};

/// The dtype lists of one argument: `a2` on the Atlas A2 training series (Ascend910B), `training` on the Atlas
/// training series (Ascend910A); `training` empty means the same as `a2`, {ACL_DT_UNDEFINED} that the operator
/// does not exist there.
struct ArgSpec {
  const char* arg;  // CANN's parameter name ("self", "gradOutput"; a tensor list's elements take its name)
  std::vector<aclDataType> a2;
  std::vector<aclDataType> training = {};
  FormatRule formats = FormatRule::AnyPlain;
};

struct OperatorSpec {
  const char* op;  // "aclnnConvolution"
  std::vector<ArgSpec> args;
  const char* source;  // where CANN says so (operator source and documentation, CANN 8.1 / ops-nn, ops-math)
};

/// Every operator of the table.
const std::vector<OperatorSpec>& operator_table();
/// The row of `op`, or nullptr.
const OperatorSpec* find_operator(const std::string& op);
/// The spec of `arg` ("tensors[2]" is looked up as "tensors") of `op`, or nullptr.
const ArgSpec* find_arg(const OperatorSpec& op, const std::string& arg);
/// The dtypes `arg` accepts on the SoC the fake plays.
const std::vector<aclDataType>& accepted_dtypes(const ArgSpec& arg, SocProfile soc);
/// Whether `format` is accepted for a `rank`-D tensor under `rule`; `expected` says what would be.
bool format_accepted(FormatRule rule, aclFormat format, size_t rank, std::string* expected);
const char* format_name(aclFormat format);

}  // namespace fake_ascend
