// bprop ops [--json | --markdown]: the op coverage matrix.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "bprop/device.h"
#include "bprop/op_table.h"
#include "bprop/registry.h"
#include "command_line.h"
#include "commands.h"

namespace bprop::cli {
namespace {

struct OpRow {
  std::string op;
  std::string family;
  std::vector<std::string> kernels;  // backends with a kernel
  std::vector<DType> dtypes;         // the float dtypes it takes
  // How each device backend runs it (BackendRegistration::describe_op: on an NPU "aclnn <Op>", "composed" or
  // "cpu fallback"), in device_columns() order.
  std::vector<std::string> on_devices;
  std::string grad;                  // "bprop", "no grad" or "missing"
  bool first_order = false;          // in the gradcheck op table at first order
  bool second_order = false;         // ... and at second order
};

// The backends that describe their ops: one column each.
std::vector<Backend> device_columns() {
  std::vector<Backend> out;
  for (const Backend b : registered_backends()) {
    if (backend_registration(b).describe_op) out.push_back(b);
  }
  return out;
}

std::vector<OpRow> matrix() {
  std::vector<OpRow> rows;
  const auto& table = op_check_table();
  for (const std::string& name : registry().names()) {
    const OpDef& def = registry().get(name);
    OpRow r;
    r.op = name;
    r.family = def.family.empty() ? "-" : def.family;
    for (const Backend b : registered_backends()) {
      if (def.kernels[b.id]) r.kernels.emplace_back(backend_name(b));
    }
    for (const Backend b : device_columns()) r.on_devices.push_back(backend_registration(b).describe_op(def));
    r.dtypes = op_float_dtypes(name);
    r.grad = def.no_grad ? "no grad" : (def.bprop ? "bprop" : "missing");
    for (const OpCheckRow& row : table) {
      if (row.op != name) continue;
      r.first_order = r.first_order || row.first_order;
      r.second_order = r.second_order || row.second_order;
    }
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) { return a.family < b.family; });
  return rows;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s.empty() ? "-" : s;
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

// "f32,f64,f16,bf16" (the text table) or "float32, float64, ..." (markdown, JSON)
std::string dtype_list(const std::vector<DType>& dtypes, bool short_names) {
  std::vector<std::string> names;
  for (const DType dt : dtypes) {
    const std::string n = dtype_name(dt);
    names.push_back(!short_names ? n : n == "bfloat16" ? "bf16" : "f" + n.substr(5));
  }
  return join(names, short_names ? "," : ", ");
}

void print_text(const std::vector<OpRow>& rows) {
  size_t w_op = 2, w_family = 6, w_kernels = 7, w_dtypes = 6;
  for (const auto& r : rows) {
    w_op = std::max(w_op, r.op.size());
    w_family = std::max(w_family, r.family.size());
    w_kernels = std::max(w_kernels, join(r.kernels, ",").size());
    w_dtypes = std::max(w_dtypes, dtype_list(r.dtypes, true).size());
  }
  auto line = [&](const std::string& op, const std::string& family, const std::string& kernels,
                  const std::string& dtypes, const std::string& grad, const std::string& first,
                  const std::string& second) {
    std::cout << std::left << std::setw(static_cast<int>(w_op) + 2) << op << std::setw(static_cast<int>(w_family) + 2)
              << family << std::setw(static_cast<int>(w_kernels) + 2) << kernels
              << std::setw(static_cast<int>(w_dtypes) + 2) << dtypes << std::setw(9) << grad << std::setw(7) << first
              << second << "\n";
  };
  line("op", "family", "kernels", "dtypes", "grad", "check1", "check2");
  for (const auto& r : rows) {
    line(r.op, r.family, join(r.kernels, ","), dtype_list(r.dtypes, true), r.grad, yes_no(r.first_order),
         yes_no(r.second_order));
  }
  std::cout << rows.size() << " ops\n";
}

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::OptFloat: return "opt_float";
    case AttrKind::Bool: return "bool";
    case AttrKind::String: return "string";
    case AttrKind::IntList: return "int_list";
    case AttrKind::Axes: return "axes";
    case AttrKind::OptInt: return "opt_int";
    case AttrKind::IntPair: return "int_pair";
    case AttrKind::IntMatrix: return "int_matrix";
    case AttrKind::DType: return "dtype";
  }
  return "unknown";
}

nlohmann::ordered_json attr_json(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

// The op's signature, as a statement of a vector file uses it: inputs in order, whether they come as one
// list, and the attribute schema (kind, default, choices).
void add_signature(nlohmann::ordered_json& j, const OpDef& def) {
  j["inputs"] = nlohmann::ordered_json::array();
  for (const InputSpec& in : def.inputs) j["inputs"].push_back({{"name", in.name}, {"optional", in.optional}});
  j["variadic"] = def.variadic;
  j["attrs"] = nlohmann::ordered_json::array();
  for (const AttrSpec& a : def.attrs) {
    nlohmann::ordered_json spec = {{"name", a.name}, {"kind", attr_kind_name(a.kind)}, {"required", a.required},
                                   {"default", attr_json(a.default_value)}};
    if (!a.choices.empty()) spec["choices"] = a.choices;
    j["attrs"].push_back(std::move(spec));
  }
}

void print_json(const std::vector<OpRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    nlohmann::ordered_json j;
    j["op"] = r.op;
    j["family"] = r.family;
    j["kernels"] = r.kernels;
    j["dtypes"] = nlohmann::ordered_json::array();
    for (const DType dt : r.dtypes) j["dtypes"].push_back(dtype_name(dt));
    const std::vector<Backend> columns = device_columns();
    for (size_t i = 0; i < columns.size(); ++i) j[backend_name(columns[i])] = r.on_devices[i];
    j["grad"] = r.grad;
    j["gradcheck"] = {{"first_order", r.first_order}, {"second_order", r.second_order}};
    add_signature(j, registry().get(r.op));
    out.push_back(std::move(j));
  }
  std::cout << out.dump(2) << "\n";
}

void print_markdown(const std::vector<OpRow>& rows) {
  int with_bprop = 0, no_grad = 0, first = 0, second = 0;
  for (const auto& r : rows) {
    with_bprop += r.grad == "bprop";
    no_grad += r.grad == "no grad";
    first += r.first_order;
    second += r.second_order;
  }
  std::cout << "# Op coverage\n\n"
               "Generated by `bprop ops --markdown` (do not edit by hand; regenerate after adding an op).\n\n"
               "Every registered op with its family, the backends that have a kernel for it, whether it has a\n"
               "bprop (written with differentiable public ops, so it differentiates again) or is marked no grad,\n"
               "and whether the gradcheck op table (`core/registry/op_table.cpp`) checks it against finite\n"
               "differences at first and second order. The ascend column says how the op runs on an NPU\n"
               "(docs/ascend.md): an aclnn kernel, composed of ops that run there, or the CPU kernel with a\n"
               "host round trip (counted per op at run time; aclnn kernels also fall back for float64 where\n"
               "the NPU has none). The dtypes column lists the float dtypes the op takes (its float inputs, or\n"
               "its output for the random ops); the ops PyTorch has no bfloat16 CPU kernel for take float32\n"
               "and float64 only (docs/mixed-precision.md). Integer and bool inputs (indices, labels, masks)\n"
               "are as each op's signature in docs/vectors.md says.\n\n"
            << rows.size() << " ops: " << with_bprop << " with a bprop, " << no_grad << " no grad; " << first
            << " gradchecked at first order, " << second << " at second order.\n\n"
            << "| op | family | kernels | dtypes | ";
  for (const Backend b : device_columns()) std::cout << backend_name(b) << " | ";
  std::cout << "grad | gradcheck 1st | gradcheck 2nd |\n|---|---|---|---|";
  for (size_t i = 0; i < device_columns().size(); ++i) std::cout << "---|";
  std::cout << "---|---|---|\n";
  for (const auto& r : rows) {
    std::cout << "| `" << r.op << "` | " << r.family << " | " << join(r.kernels, ", ") << " | "
              << dtype_list(r.dtypes, true) << " | ";
    for (const std::string& d : r.on_devices) std::cout << d << " | ";
    std::cout << r.grad << " | "
              << yes_no(r.first_order) << " | " << yes_no(r.second_order) << " |\n";
  }
}

}  // namespace

int ops_command(const std::vector<std::string>& args) {
  CommandLine cl("ops", "The op coverage matrix: op, family, kernels per backend, the float dtypes it takes, bprop "
                        "or no grad, and whether the gradcheck op table checks it at first (check1) and second "
                        "(check2) order.");
  cl.flag("--json", "as JSON, with each op's inputs, whether they come as one list (variadic) and its attributes "
                    "(name, kind, required, default, choices)")
      .flag("--markdown", "as the Markdown of docs/ops.md");
  try {
    if (!cl.parse(args)) return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop ops: " << e.what() << " (see bprop ops --help)\n";
    return 2;
  }
  enum class Mode { Text, Json, Markdown } mode = Mode::Text;
  if (cl.has("--json")) mode = Mode::Json;
  if (cl.has("--markdown")) mode = Mode::Markdown;
  const std::vector<OpRow> rows = matrix();
  if (mode == Mode::Json) print_json(rows);
  else if (mode == Mode::Markdown) print_markdown(rows);
  else print_text(rows);
  return 0;
}

}  // namespace bprop::cli
