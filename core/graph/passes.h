// Optimisation passes over a traced graph. Each rewrites the graph in place and returns whether it changed
// anything; none changes a result's bits (a rewrite that would, such as x + 0 -> x, which turns -0 into +0, is
// applied only where it is exact). optimize() runs them to a fixed point, then groups elementwise chains into
// fused loops, and logs the node count before and after every pass that changed something.
#pragma once
#include <string>
#include <vector>

#include "graph/ir.h"

namespace bprop::graph {

/// Drops nodes whose values reach no output, and constants no node reads.
bool eliminate_dead_code(Graph& g);
/// Merges nodes computing the same op with the same attributes on the same values, and small constants of the same
/// dtype, shape and bits.
bool eliminate_common_subexpressions(Graph& g);
/// Computes, once, the nodes whose inputs are all constants (when the result is not much larger than them).
bool fold_constants(Graph& g);
/// Algebraic identities the bprops produce: x * 1, 1 * x, x / 1, x - 0, x + (-0), neg(neg x), reshape,
/// broadcast_to, cast and transpose that change nothing, reshape of a reshape, transpose of a transpose.
bool simplify(Graph& g);
/// Moves elementwise nodes up past nodes they do not depend on, joining runs of one shape and dtype that another
/// node cut in two (graph/pass_cluster.cpp); fuse_elementwise runs it first.
bool cluster_elementwise(Graph& g);
/// Groups runs of consecutive elementwise nodes of one shape and dtype into fused loops.
void fuse_elementwise(Graph& g);

/// A rewrite optimize() runs: its name (as Graph::passes records it, and BPROP_JIT_DUMP and
/// OptimizeOptions::disabled name it) and its function, true when it changed the graph.
struct Pass {
  const char* name;
  bool (*run)(Graph&);
};
/// The rewrites, in the order each round runs them: dead-code, simplify, fold-constants, common-subexpressions.
const std::vector<Pass>& rewrite_passes();

/// What every pass keeps true of the IR: each value defined once (an argument, a constant or one node's output), a
/// node reading only values defined before it, outputs and Parameter updates defined, a type per value.
/// std::logic_error naming `after` (the pass just run) and the first value or node that breaks it.
void verify(const Graph& g, const std::string& after);

struct OptimizeOptions {
  bool passes = true;  // the rewrite passes (rewrite_passes())
  bool fusion = true;
  /// Rewrite passes left out, by name (what a pass is worth, or which one broke a graph).
  std::vector<std::string> disabled;
  /// verify() after every pass that changed the graph. On when BPROP_JIT_VERIFY is set in the environment (the
  /// test suites set it), off otherwise.
  bool verify = verify_by_default();
  static bool verify_by_default();
};

/// The rewrite passes to a fixed point, then fusion; records each change in g.passes. With BPROP_JIT_DUMP set to
/// pass names separated by commas (or "all"), the graph is printed to stderr after each of those passes that
/// changed it.
void optimize(Graph& g, const OptimizeOptions& options = {});

/// Replaces every read of value v (node inputs and outputs) with remap[v], which must not be a later value.
void apply_remap(Graph& g, const std::vector<int>& remap);

}  // namespace bprop::graph
