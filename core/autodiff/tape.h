// The tape: grad levels, recorded nodes and the backward walk (internal to the core).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bprop/grad.h"
#include "bprop/registry.h"

namespace bprop::autodiff {

/// One op recorded at one grad level. Single output; `edges[i]` is the node that produced input i at this
/// level (null when input i is not differentiated here).
struct Node {
  int level = 0;
  bool is_leaf = false;
  const OpDef* op = nullptr;  // null for leaves and custom bprops
  /// A Cell's own bprop (record_custom): kept out of line, as most nodes are ops and a node's size decides how
  /// long a tape still fits in cache.
  struct Custom {
    CustomBprop bprop;
    std::string name;
  };
  std::unique_ptr<Custom> custom;
  std::vector<Tensor> inputs;
  Tensor out;  // the output as seen by outer levels (this level's entry removed, so no cycle); undefined when
               // the op's bprop does not read it
  Attrs attrs;
  SmallVector<std::shared_ptr<Node>, 2> edges;
  /// Above the seq of every node in `edges`: the backward walk runs nodes by decreasing seq, a topological order
  /// it needs no pass over the graph to find (creation order, the reverse of what the forward ran).
  uint64_t seq = 0;
  // Scratch of one backward walk: the walk that reached the node last, and the gradient summed so far.
  uint64_t epoch = 0;
  Tensor grad;

  std::string name() const;

  Node() noexcept {}  // NOLINT(modernize-use-equals-default): no zeroing before the member initialisers (TensorImpl)
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Releases what the node holds iteratively: a graph of a million ops must not recurse a million deep.
  ~Node();
};

/// Opens a new grad level (recorded from now on) and returns its id.
int open_level();
/// Stops recording at `level`; its nodes stay usable for backward walks.
void close_level(int level);
/// True while any level is open.
bool recording();

/// Suspends every open level for its lifetime (construct of a custom-bprop cell, finite differences).
class SuspendRecording {
 public:
  SuspendRecording();
  ~SuspendRecording();
  SuspendRecording(const SuspendRecording&) = delete;
  SuspendRecording& operator=(const SuspendRecording&) = delete;

 private:
  std::vector<int> saved_;
};

/// Records `out = op(inputs)` at every open level where an input is differentiated. `movable`, when set, is
/// `inputs` itself, which the last node recorded takes instead of a copy.
void record(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, Tensor& out,
            std::vector<Tensor>* movable = nullptr);
void record_custom(const std::string& name, const std::vector<Tensor>& inputs, Tensor& out, const CustomBprop& bprop);

/// The producer of `t` at `level`, or null.
std::shared_ptr<Node> node_at(const Tensor& t, int level);

/// A tensor sharing x's storage and outer history, differentiated at `level` as a fresh leaf.
Tensor make_leaf(const Tensor& x, int level, std::shared_ptr<Node>& leaf);
/// Same values, with the entries of `level` and above removed (what escapes a grad call).
Tensor strip_levels(const Tensor& x, int level);

/// Called with (index into `leaves`, gradient) as soon as a leaf's gradient is final during the walk.
using LeafFinalHook = std::function<void(size_t leaf, const Tensor& grad)>;

/// What a walk does with the tensors a node keeps for its bprop (inputs, output) once that bprop has run.
enum class SavedTensors {
  Keep,             // the level may be walked again (a vjp's pullback, one jacobian row per walk)
  ReleaseAsWalked,  // the only walk: freed while still in cache, instead of in a cold pass when the tape dies
};

/// Walks level `level` back from `root` with cotangent `sens` and returns the gradient of each leaf
/// (undefined where it does not influence root). `on_final`, when set, is called for each reached leaf right
/// after the last node that feeds it has run its bprop, while the rest of the walk is still to come.
std::vector<Tensor> backward(int level, const Tensor& root, const Tensor& sens,
                             const std::vector<std::shared_ptr<Node>>& leaves,
                             const LeafFinalHook& on_final = {}, SavedTensors saved = SavedTensors::Keep);

}  // namespace bprop::autodiff
