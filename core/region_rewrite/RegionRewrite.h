#pragma once
// Fused-region kernels in a TorchScript model (docs/runtime.md, "Fused regions"): every place a
// region kernel's chain runs is replaced by
//
//     %served, %outs = <callOp>(["k3", "k9"], [%in0, %in1, ...])
//     %o0, %o1 = prim::If(%served)
//       block0(): the kernel's outputs, unpacked from %outs
//       block1(): the chain's original nodes, unchanged
//
// so a call the kernels' guards do not take (or a package that is not loaded) runs exactly the ops
// the model ran before, each still open to the single-op kernels. The call op (the runtime's
// kforge::region_call, schema "(str[] kernels, Tensor[] inputs) -> (bool, Tensor[])") must be
// registered before the graph runs, and must return as many tensors as the region has outputs
// when it serves a call. Internal to core (LibTorch).

#include "model/RegionChain.h"
#include "util/Result.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <string>
#include <vector>

namespace kforge::core {

/// A region kernel: its id in the package and the chain its card was captured with.
struct RegionKernelChain {
    std::string kernelId;
    RegionChain chain;
};

/// What a rewrite did, per group of kernels with one chain (the same ops, arguments and data flow;
/// the shapes may differ, which the guards tell apart at run time).
struct RegionRewriteGroup {
    std::vector<std::string> kernelIds;
    std::string chainText; // RegionChain::text()
    int replaced = 0;      // places of the graph that now call the kernels
    std::string note;      // why a group replaced nothing ("" when it replaced something)
};

/// Rewrites `graph` in place. A match is replaced only where it is safe to run it as one call:
/// its nodes can be brought together without reordering any read or write of memory (AliasDb), and
/// an in-place member writes no tensor that anything outside the region could see.
std::vector<RegionRewriteGroup> rewriteRegions(const std::shared_ptr<torch::jit::Graph>& graph,
                                               const std::vector<RegionKernelChain>& kernels,
                                               const std::string& callOp);

/// Adds method `methodName` to `module`'s class: its forward, inlined (so a chain that crosses
/// submodule calls is one graph) and rewritten. Forward itself stays as it is, so one module runs
/// both ways on the same parameters, and the new method's executor plans on its own first call.
/// AlreadyExists when the class has a method of that name.
Result<std::vector<RegionRewriteGroup>> addRegionMethod(torch::jit::Module& module,
                                                        const std::vector<RegionKernelChain>& kernels,
                                                        const std::string& callOp, const std::string& methodName);

/// One chain up to its shapes: members' operators, non-tensor arguments and sources, and the
/// outputs. Kernels with equal keys are offered the same calls.
std::string regionStructureKey(const RegionChain& chain);

} // namespace kforge::core
