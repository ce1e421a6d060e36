#include "builtin_proposer/PointwiseRegionFamily.h"

#include "regions/RegionOperatorCard.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>

namespace kforge::core {

namespace {

const std::vector<Knob> kKnobs = {{"threads", "threads-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""},
                                  {"items_per_thread", "items-per-thread", "", ""}};

const char* modeName(int mode)
{
    static const char* const kNames[] = {"flat", "scalar", "strided"};
    return kNames[mode];
}

std::vector<std::int64_t> contiguousOver(const std::vector<std::int64_t>& dims)
{
    std::vector<std::int64_t> strides(dims.size(), 1);
    for (std::size_t d = dims.size(); d-- > 1;)
        strides[d - 1] = strides[d] * dims[d];
    return strides;
}

// The region inputs a batch_norm member reads per channel (weight, bias, running statistics).
// Unsupported when a statistic is computed in the region, or an input is read both per channel and
// element by element (one operand cannot have both layouts).
Result<std::set<int>> perChannelInputs(const RegionChain& chain)
{
    const auto isStatistic = [](const ChainMember& member, const std::string& arg) {
        return member.op == "aten::batch_norm" &&
            (arg == "weight" || arg == "bias" || arg == "running_mean" || arg == "running_var");
    };
    std::set<int> channel;
    for (const ChainMember& member : chain.members)
        for (std::size_t a = 0; a < member.args.size() && a < member.sources.size(); ++a)
            if (isStatistic(member, member.args[a].name))
                for (const ChainSource& source : member.sources[a]) {
                    if (source.fromMember)
                        return makeError(ErrorCode::Unsupported,
                                         "batch_norm's " + member.args[a].name + " is computed in the region");
                    channel.insert(source.index);
                }
    for (const ChainMember& member : chain.members)
        for (std::size_t a = 0; a < member.args.size() && a < member.sources.size(); ++a)
            if (!isStatistic(member, member.args[a].name))
                for (const ChainSource& source : member.sources[a])
                    if (!source.fromMember && channel.contains(source.index))
                        return makeError(ErrorCode::Unsupported,
                                         "input in" + std::to_string(source.index) +
                                             " is read per channel by batch_norm and element by element by " +
                                             member.op);
    return channel;
}

// Strides over the output's dims of a per-channel operand [C]: its stride on dim 1, 0 elsewhere.
std::optional<std::vector<std::int64_t>> channelStrides(const TensorSpec& t, const std::vector<std::int64_t>& sizes)
{
    if (sizes.size() < 2 || t.sizes.size() != 1 || t.strides.size() != 1 || t.sizes[0] != sizes[1])
        return std::nullopt;
    std::vector<std::int64_t> strides(sizes.size(), 0);
    strides[1] = t.strides[0];
    return strides;
}

// A shape of the expression in iteration coordinates: per dim, the iteration dim its coordinate
// follows (-1: broadcast, always 0) plus `offset`.
struct Level {
    struct Dim {
        int dim = -1;
        std::int64_t offset = 0;
    };
    std::vector<std::int64_t> shape;
    std::vector<Dim> map;
};

std::optional<Level> branchLevel(const PointwiseExpression& e, int context, const std::vector<std::int64_t>& sizes);

// Cat `k`'s result in the coordinates of the level it is computed in (right-aligned, size-1 dims
// broadcast). nullopt where it does not broadcast to that level.
std::optional<Level> catLevel(const PointwiseExpression& e, int k, const std::vector<std::int64_t>& sizes)
{
    const PointwiseCat& cat = e.cats()[static_cast<std::size_t>(k)];
    const auto parent = branchLevel(e, cat.context, sizes);
    if (!parent || cat.sizes.size() > parent->shape.size())
        return std::nullopt;
    const std::size_t lead = parent->shape.size() - cat.sizes.size();
    Level level{cat.sizes, std::vector<Level::Dim>(cat.sizes.size())};
    for (std::size_t d = 0; d < cat.sizes.size(); ++d) {
        if (cat.sizes[d] == parent->shape[lead + d])
            level.map[d] = parent->map[lead + d];
        else if (cat.sizes[d] != 1)
            return std::nullopt;
    }
    return level;
}

// The shape a branch context's values have (the iteration sizes for -1), in iteration coordinates:
// the cat's level with the cat dim as long as the branch and shifted back by its start. nullopt
// where a cat's result is broadcast along its cat dim.
std::optional<Level> branchLevel(const PointwiseExpression& e, int context, const std::vector<std::int64_t>& sizes)
{
    if (context < 0) {
        Level level{sizes, std::vector<Level::Dim>(sizes.size())};
        for (std::size_t d = 0; d < sizes.size(); ++d)
            level.map[d] = {static_cast<int>(d), 0};
        return level;
    }
    const PointwiseBranchContext& branch = e.branchContexts()[static_cast<std::size_t>(context)];
    const PointwiseCat& cat = e.cats()[static_cast<std::size_t>(branch.cat)];
    auto level = catLevel(e, branch.cat, sizes);
    if (!level || level->map[cat.dim].dim < 0)
        return std::nullopt;
    const auto b = static_cast<std::size_t>(branch.branch);
    level->shape[cat.dim] = cat.bounds[b + 1] - cat.bounds[b];
    level->map[cat.dim].offset -= cat.bounds[b];
    return level;
}

// Strides over the iteration `sizes` of input `t` read in branch context `context`, and `shift`,
// what its offset adds: its broadcast strides against the context's shape, mapped to the iteration
// dims. nullopt where it does not broadcast so.
std::optional<std::vector<std::int64_t>> branchStrides(const PointwiseExpression& e, const TensorSpec& t, int context,
                                                       const std::vector<std::int64_t>& sizes, std::int64_t& shift)
{
    const auto level = branchLevel(e, context, sizes);
    if (!level)
        return std::nullopt;
    const auto own = broadcastStrides(t, level->shape);
    if (!own)
        return std::nullopt;
    std::vector<std::int64_t> strides(sizes.size(), 0);
    shift = 0;
    for (std::size_t d = 0; d < own->size(); ++d) {
        if ((*own)[d] == 0)
            continue;
        const Level::Dim& to = level->map[d];
        if (to.dim < 0)
            return std::nullopt;
        strides[static_cast<std::size_t>(to.dim)] += (*own)[d];
        shift += to.offset * (*own)[d];
    }
    return strides;
}

} // namespace

Result<std::unique_ptr<PointwiseRegionFamily>> PointwiseRegionFamily::create(const OperatorCard& card)
{
    PointwiseOptions options;
    options.integers = true;      // integer values carried in their own types through the element function
    options.concatenation = true; // a cat's branches read at shifted coordinates
    auto expression = PointwiseExpression::fromRegion(card, options);
    if (!expression)
        return unsupportedCard(card, expression.error().message);
    std::unique_ptr<PointwiseRegionFamily> f(new PointwiseRegionFamily(std::move(expression.value())));
    f->m_chain = card.region->text();
    if (card.outputs.empty())
        return unsupportedCard(card, "the region has no output");
    const TensorSpec& first = card.outputs[0];
    for (const TensorSpec& out : card.outputs) {
        if (out.sizes != first.sizes)
            return unsupportedCard(
                card, "region outputs of different sizes (" + first.toShortString() + ", " + out.toShortString() + ")");
        if (!denseStorageOrder(out))
            return unsupportedCard(card, "output " + out.toShortString() + " is not dense");
    }
    f->m_numel = first.numel();
    if (f->m_numel == 0)
        return unsupportedCard(card, "empty output");
    const auto channel = perChannelInputs(*card.region);
    if (!channel)
        return unsupportedCard(card, channel.error().message);
    std::vector<std::vector<std::int64_t>> strides;
    for (std::size_t o = 0; o < card.outputs.size(); ++o) {
        const std::string name = "out" + std::to_string(o);
        f->m_outputs.push_back({name, "ptr:" + name, card.outputs[o].dtype, true, true, Mode::Flat, {}, {}});
        strides.push_back(card.outputs[o].strides);
    }
    for (std::size_t k = 0; k < card.args.size(); ++k) {
        const TensorSpec& in = card.args[k].tensors[0];
        // A 0-dim CPU tensor mixed into GPU math is a scalar to eager, but a pointer the kernel cannot read.
        if (in.device.rfind("cpu", 0) == 0 && first.device.rfind("cpu", 0) != 0)
            return unsupportedCard(card,
                                   "input " + card.args[k].name + " " + in.toShortString() +
                                       " is on the CPU (the kernel reads device memory)");
        const bool perChannel = channel->contains(static_cast<int>(k));
        // An input only a cat's branch reads (or none) is not read at the element's coordinates.
        const bool used = f->m_expression.inputUsed(static_cast<int>(k));
        auto s = !used   ? std::optional(std::vector<std::int64_t>(first.sizes.size(), 0))
            : perChannel ? channelStrides(in, first.sizes)
                         : broadcastStrides(in, first.sizes);
        if (!s)
            return unsupportedCard(card,
                                   "input " + card.args[k].name + " " + in.toShortString() +
                                       (perChannel ? " is not one value per channel (dim 1) of the output's sizes "
                                                   : " does not broadcast to the output's sizes ") +
                                       first.toShortString());
        f->m_inputs.push_back({card.args[k].name,
                               "ptr:" + card.args[k].name,
                               in.dtype,
                               false,
                               used,
                               Mode::Flat,
                               {},
                               {static_cast<int>(k), -1}});
        strides.push_back(*s);
    }
    // Each cat's coordinate along its dim, from the walk over the first output (dense).
    const PointwiseExpression& e = f->m_expression;
    for (std::size_t c = 0; c < e.cats().size(); ++c) {
        const auto level = catLevel(e, static_cast<int>(c), first.sizes);
        const Level::Dim along = level ? level->map[e.cats()[c].dim] : Level::Dim{};
        if (along.dim < 0) {
            if (e.catUsed(static_cast<int>(c)))
                return unsupportedCard(card,
                                       "a cat's result is broadcast along its cat dim to " + first.toShortString());
            f->m_cats.emplace_back();
            continue;
        }
        const auto d = static_cast<std::size_t>(along.dim);
        f->m_cats.push_back({first.sizes[d] == 1 ? 1 : first.strides[d], first.sizes[d], along.offset});
    }
    // Inputs a cat's branch reads: operands of their own, read where the branch puts them.
    for (const PointwiseInputRead& read : f->m_expression.inputReads()) {
        if (read.context < 0)
            continue;
        const auto k = static_cast<std::size_t>(read.input);
        const TensorSpec& in = card.args[k].tensors[0];
        std::int64_t shift = 0;
        auto s = branchStrides(e, in, read.context, first.sizes, shift);
        if (!s || channel->contains(read.input))
            return unsupportedCard(card,
                                   "input " + card.args[k].name + " " + in.toShortString() +
                                       " is not read as a cat's branch of " + first.toShortString());
        Operand op{card.args[k].name + "_b" + std::to_string(read.context),
                   "ptr:" + card.args[k].name,
                   in.dtype,
                   false,
                   true,
                   Mode::Strided,
                   {},
                   read};
        op.shift = shift;
        // Read where the element is in this branch, and in each enclosing cat's branch it lies in.
        for (int c = read.context; c >= 0;) {
            const PointwiseBranchContext& context = e.branchContexts()[static_cast<std::size_t>(c)];
            const PointwiseCat& cat = e.cats()[static_cast<std::size_t>(context.cat)];
            const auto b = static_cast<std::size_t>(context.branch);
            op.masks.push_back({context.cat, cat.bounds[b], cat.bounds[b + 1]});
            c = cat.context;
        }
        f->m_inputs.push_back(std::move(op));
        strides.push_back(*s);
    }
    const MergedDims merged = mergeDims(*denseStorageOrder(first), first.sizes, strides);
    f->m_dims = merged.sizes;
    const std::vector<std::int64_t> flat = contiguousOver(f->m_dims);
    std::size_t k = 0;
    for (Operand* op : [&] {
             std::vector<Operand*> all;
             for (Operand& o : f->m_outputs)
                 all.push_back(&o);
             for (Operand& i : f->m_inputs)
                 all.push_back(&i);
             return all;
         }()) {
        op->strides = merged.strides[k++];
        const bool zero = std::all_of(op->strides.begin(), op->strides.end(), [](std::int64_t s) { return s == 0; });
        if (op->read.context >= 0)
            op->mode = Mode::Strided; // read at shifted offsets, masked
        else if (!op->output && (zero || !op->used))
            op->mode = Mode::Scalar;
        else if (op->strides == flat)
            op->mode = Mode::Flat;
        else
            op->mode = Mode::Strided;
    }
    return f;
}

Result<std::unique_ptr<PointwiseRegionFamily>> PointwiseRegionFamily::createForOp(const OperatorCard& card)
{
    // to() into self's own dtype returns self: there is no copy to run.
    const ArgSpec* self = card.findArg("self");
    if (card.op == "aten::to" && self && self->kind == ArgKind::Tensor && self->tensors.size() == 1 &&
        card.outputs.size() == 1 && card.outputs[0].dtype == self->tensors[0].dtype)
        return unsupportedCard(card, "to() of a tensor into its own dtype returns the tensor itself");
    auto chainCard = makeOpChainCard(card);
    if (!chainCard)
        return unsupportedCard(card, chainCard.error().message);
    auto f = create(chainCard.value());
    if (!f)
        return unsupportedCard(card, f.error().message);
    // Region input k is the argument member 0 reads it as: the plan passes that argument.
    const std::vector<std::string> names = opChainArgumentNames(chainCard.value());
    for (std::size_t k = 0; k < names.size(); ++k)
        f.value()->m_inputs.at(k).token = "ptr:" + names[k];
    f.value()->m_inPlace = isInPlaceOpName(card.op);
    return f;
}

std::string PointwiseRegionFamily::regionArguments(const std::string& prefix, const std::string& suffix,
                                                   const std::string& at) const
{
    std::string args;
    for (const PointwiseInputRead& read : m_expression.inputReads()) {
        const auto operand =
            std::find_if(m_inputs.begin(), m_inputs.end(), [&read](const Operand& o) { return o.read == read; });
        args += prefix + operand->name + suffix + ", ";
    }
    for (std::size_t c = 0; c < m_cats.size(); ++c)
        if (m_expression.catUsed(static_cast<int>(c)))
            args += "kfCat" + std::to_string(c) + "(" + at + "), ";
    for (std::size_t n = 0; n < m_outputs.size(); ++n)
        args += "y" + std::to_string(n) + (n + 1 < m_outputs.size() ? ", " : "");
    return args;
}

bool PointwiseRegionFamily::hasStrided() const
{
    const auto strided = [](const Operand& o) { return o.mode == Mode::Strided; };
    return std::any_of(m_inputs.begin(), m_inputs.end(), strided) ||
        std::any_of(m_outputs.begin(), m_outputs.end(), strided);
}

bool PointwiseRegionFamily::vectorWidthAllowed(int width) const
{
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return false;
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list)
            if (o.mode != Mode::Scalar && width * dtypeBytes(o.dtype) > 16)
                return false;
    // Strided operands take the V elements of a vector from one outer index: V divides the innermost dim.
    return !hasStrided() || (!m_dims.empty() && m_dims.back() % width == 0);
}

std::string PointwiseRegionFamily::branchText(const Operand& o)
{
    std::string text;
    for (const CatMask& m : o.masks)
        text += (text.empty() ? ", a cat's branch: cat coordinates " : " and cat " + std::to_string(m.cat) + "'s ") +
            std::to_string(m.lo) + " to " + std::to_string(m.hi);
    return text;
}

bool PointwiseRegionFamily::catVectorsUniform(int c, int width) const
{
    const CatCoordinate& cat = m_cats.at(static_cast<std::size_t>(c));
    if (cat.size == 1 || cat.stride % width == 0)
        return true; // one coordinate for the whole vector
    if (cat.stride != 1 || cat.size % width != 0 || cat.offset % width != 0)
        return false;
    const std::vector<std::int64_t>& bounds = m_expression.cats()[static_cast<std::size_t>(c)].bounds;
    return std::all_of(bounds.begin(), bounds.end(), [width](std::int64_t b) { return b % width == 0; });
}

bool PointwiseRegionFamily::vectorMoves(const Operand& op, int width) const
{
    if (op.read.context >= 0)
        return stridesAllowVectors(op.strides, width) && op.shift % width == 0 &&
            std::all_of(op.masks.begin(), op.masks.end(),
                        [&](const CatMask& m) { return catVectorsUniform(m.cat, width); });
    return op.mode == Mode::Flat || (op.mode == Mode::Strided && stridesAllowVectors(op.strides, width));
}

std::vector<Knob> PointwiseRegionFamily::knobs() const
{
    return kKnobs;
}

Result<void> PointwiseRegionFamily::check(const nlohmann::json& p) const
{
    const std::string context = "pointwise_region template parameters";
    if (auto r = checkKnobsAndThreads(p, knobs(), context); !r)
        return r;
    const int v = p["vector_width"].get<int>();
    if (!vectorWidthAllowed(v))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " not allowed for the region's dtypes and layouts",
                         context);
    if (p["items_per_thread"].get<int>() > 8)
        return makeError(ErrorCode::InvalidArgument, "items_per_thread must be 1, 2, 4 or 8", context);
    return {};
}

nlohmann::json PointwiseRegionFamily::rootParams() const
{
    const int v = widestAllowedWidth([this](int w) { return vectorWidthAllowed(w); });
    return {{"threads", 256}, {"vector_width", v}, {"items_per_thread", m_numel >= (1 << 22) ? 2 : 1}};
}

std::string PointwiseRegionFamily::operandDefinitions(int width) const
{
    std::ostringstream s;
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list) {
            if (!o.used)
                continue;
            const bool vectors = o.mode != Mode::Scalar && vectorMoves(o, width);
            s << (isBuiltinIntegerDtype(o.dtype) ? integerOperandTypes(o.name, o.dtype, o.output, vectors)
                                                 : regionOperandTypes(o.name, o.dtype, o.output, vectors));
            if (o.mode == Mode::Strided)
                s << offsetFunction("kfOffset_" + o.name, m_dims, o.strides);
        }
    for (std::size_t c = 0; c < m_cats.size(); ++c)
        s << "__device__ __forceinline__ long long kfCat" << c << "(long long i) { return "
          << (m_cats[c].size == 1
                  ? std::string("0")
                  : "(i / " + std::to_string(m_cats[c].stride) + "LL) % " + std::to_string(m_cats[c].size) + "LL")
          << (m_cats[c].offset != 0 ? " + (" + std::to_string(m_cats[c].offset) + "LL)" : std::string()) << "; }\n";
    return s.str();
}

std::string PointwiseRegionFamily::loadStatements(std::size_t n, int width) const
{
    const Operand& o = m_inputs[n];
    if (!o.used)
        return ""; // the element function does not take it
    const std::string at = "xs_" + o.name + "[k]";
    std::ostringstream s;
    if (o.mode == Mode::Scalar) {
        s << "#pragma unroll\n            for (int e = 0; e < V; ++e)\n                " << at << "[e] = s_" << o.name
          << ";\n";
        return s.str();
    }
    if (o.read.context >= 0) {
        // A cat branch's input: at its shifted offset, and only where the element is in the branch
        // (and in the enclosing cats' branches it lies in).
        const bool vectors = vectorMoves(o, width);
        const std::string element = vectors ? "i" : "i + e";
        std::string inside;
        for (const CatMask& m : o.masks) {
            const std::string c = "kfCat" + std::to_string(m.cat) + "(" + element + ")";
            inside += (inside.empty() ? "" : " && ") + c + " >= " + std::to_string(m.lo) + "LL && " + c + " < " +
                std::to_string(m.hi) + "LL";
        }
        const std::string zero = "static_cast<" + pointwiseValueType(o.dtype) + ">(0)";
        s << "            {\n                const long long o = kfOffset_" << o.name << "(i) + (" << o.shift
          << "LL);\n";
        if (vectors)
            s << "                if (" << inside << ") {\n                    const Vec_" << o.name
              << " t = *reinterpret_cast<const Vec_" << o.name << "*>(" << o.name
              << " + o);\n#pragma unroll\n                    for (int e = 0; e < V; ++e)\n"
              << "                        " << at << "[e] = kfLoad_" << o.name
              << "(t.v[e]);\n                } else {\n#pragma unroll\n                    for (int e = 0; e < V; "
                 "++e)\n"
              << "                        " << at << "[e] = " << zero << ";\n                }\n";
        else
            s << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n                    " << at << "[e] = ("
              << inside << ") ? kfLoad_" << o.name << "(" << o.name << "[o + e * " << o.strides.back()
              << "LL]) : " << zero << ";\n";
        s << "            }\n";
        return s.str();
    }
    s << "            {\n";
    if (o.mode == Mode::Flat)
        s << "                const Vec_" << o.name << " t = reinterpret_cast<const Vec_" << o.name << "*>(" << o.name
          << ")[j];\n";
    else if (vectorMoves(o, width))
        s << "                const Vec_" << o.name << " t = *reinterpret_cast<const Vec_" << o.name << "*>(" << o.name
          << " + kfOffset_" << o.name << "(i));\n";
    else
        s << "                const long long o = kfOffset_" << o.name << "(i);\n";
    s << "#pragma unroll\n                for (int e = 0; e < V; ++e)\n                    " << at << "[e] = kfLoad_"
      << o.name << "("
      << (vectorMoves(o, width) ? std::string("t.v[e]")
                                : o.name + "[o + e * " + std::to_string(o.strides.back()) + "LL]")
      << ");\n            }\n";
    return s.str();
}

std::string PointwiseRegionFamily::storeStatements(std::size_t n, int width) const
{
    const Operand& o = m_outputs[n];
    const std::string r = "r" + std::to_string(n);
    std::ostringstream s;
    if (o.mode == Mode::Flat)
        s << "            reinterpret_cast<Vec_" << o.name << "*>(" << o.name << ")[j] = " << r << ";\n";
    else if (vectorMoves(o, width))
        s << "            *reinterpret_cast<Vec_" << o.name << "*>(" << o.name << " + kfOffset_" << o.name
          << "(i)) = " << r << ";\n";
    else
        s << "            {\n                const long long o = kfOffset_" << o.name
          << "(i);\n#pragma unroll\n                for (int e = 0; e < V; ++e)\n                    " << o.name
          << "[o + e * " << o.strides.back() << "LL] = " << r << ".v[e];\n            }\n";
    return s.str();
}

Result<Candidate> PointwiseRegionFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    const int v = params["vector_width"].get<int>();
    const int threads = params["threads"].get<int>();
    const int items = params["items_per_thread"].get<int>();
    const std::size_t nin = m_inputs.size(), nout = m_outputs.size();
    const std::string kernel = "kf_pointwise_region";
    std::ostringstream s;
    s << "// Built-in pointwise " << (m_inPlace ? "in-place op " : "region ") << m_chain << " over " << m_numel
      << " elements, one pass, fp32 math" << (m_expression.hasIntegers() ? " (integers exact)" : "") << " ("
      << m_expression.liveOps() << " ops).\n"
      << "// Template parameters: " << params.dump() << "\n// Merged dims (outermost first in storage):";
    for (std::int64_t d : m_dims)
        s << " " << d;
    s << "\n";
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list)
            s << "//   " << o.name << " " << o.dtype << " " << (o.used ? modeName(static_cast<int>(o.mode)) : "unused")
              << branchText(o) << "\n";
    if (m_expression.needsHalf())
        s << "#include <cuda_fp16.h>\n";
    if (m_expression.needsBfloat16())
        s << "#include <cuda_bf16.h>\n";
    s << "constexpr long long NUMEL = " << m_numel << "LL;\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr int THREADS = " << threads << ";\n"
      << "constexpr int ITEMS = " << items << ";\n"
      << "constexpr long long NVEC = NUMEL / V;\n"
      << operandDefinitions(v) << m_expression.elementFunction("kfRegion") << "\nextern \"C\" __global__ void "
      << "__launch_bounds__(THREADS) " << kernel << "(";
    // In place, self and out0 are one buffer: no __restrict__ promise on any pointer.
    const char* restrictQualifier = m_inPlace ? " " : " __restrict__ ";
    for (std::size_t n = 0; n < nin; ++n)
        s << (m_inputs[n].used ? "const t_" + m_inputs[n].name + "*" : std::string("const void*")) << restrictQualifier
          << m_inputs[n].name << ", ";
    for (std::size_t n = 0; n < nout; ++n)
        s << "t_" << m_outputs[n].name << "*" << restrictQualifier << m_outputs[n].name
          << (n + 1 < nout ? ", " : ")\n{\n");
    for (const Operand& o : m_inputs)
        if (o.used && o.mode == Mode::Scalar)
            s << "    const " << pointwiseValueType(o.dtype) << " s_" << o.name << " = kfLoad_" << o.name << "("
              << o.name << "[0]);\n";
    s << "    const long long stride = static_cast<long long>(gridDim.x) * THREADS * ITEMS;\n"
      << "    for (long long base = static_cast<long long>(blockIdx.x) * THREADS * ITEMS + threadIdx.x; base < NVEC;\n"
      << "         base += stride) {\n";
    // Each input's values in the type the element function takes (pointwiseValueType: float, or an
    // integer's own type).
    for (const Operand& o : m_inputs)
        if (o.used)
            s << "        " << pointwiseValueType(o.dtype) << " xs_" << o.name << "[ITEMS][V];\n";
    s << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
      << "            if (j >= NVEC)\n                continue;\n"
      << "            const long long i = j * V;\n            (void)i;\n";
    for (std::size_t n = 0; n < nin; ++n)
        s << loadStatements(n, v);
    s << "        }\n"
      << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const long long j = base + static_cast<long long>(k) * THREADS;\n"
      << "            if (j >= NVEC)\n                continue;\n"
      << "            const long long i = j * V;\n            (void)i;\n";
    for (std::size_t n = 0; n < nout; ++n)
        s << "            struct { t_" << m_outputs[n].name << " v[V]; } r" << n << "_;\n";
    s << "#pragma unroll\n            for (int e = 0; e < V; ++e) {\n";
    for (std::size_t n = 0; n < nout; ++n)
        s << "                " << pointwiseValueType(m_outputs[n].dtype) << " y" << n << ";\n";
    s << "                kfRegion(" << regionArguments("xs_", "[k][e]", "i + e") << ");\n";
    for (std::size_t n = 0; n < nout; ++n)
        s << "                r" << n << "_.v[e] = kfStore_" << m_outputs[n].name << "(y" << n << ");\n";
    s << "            }\n";
    for (std::size_t n = 0; n < nout; ++n) {
        const Operand& o = m_outputs[n];
        if (vectorMoves(o, v))
            s << "            Vec_" << o.name << " r" << n
              << ";\n#pragma unroll\n            for (int e = 0; e < V; ++e)\n"
              << "                r" << n << ".v[e] = r" << n << "_.v[e];\n";
        else
            s << "            const auto& r" << n << " = r" << n << "_;\n";
        s << storeStatements(n, v);
    }
    s << "        }\n    }\n";
    if (!hasStrided()) {
        // Flat and scalar operands only: the elements after the last whole vector, one per thread.
        s << "    constexpr long long TAIL = NUMEL - NVEC * V;\n"
          << "    if constexpr (TAIL > 0) {\n"
          << "        const long long g = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;\n"
          << "        if (g < TAIL) {\n            const long long i = NVEC * V + g;\n";
        for (const Operand& o : m_inputs)
            if (o.used)
                s << "            const " << pointwiseValueType(o.dtype) << " x_" << o.name << " = "
                  << (o.mode == Mode::Scalar ? "s_" + o.name : "kfLoad_" + o.name + "(" + o.name + "[i])") << ";\n";
        for (std::size_t n = 0; n < nout; ++n)
            s << "            " << pointwiseValueType(m_outputs[n].dtype) << " y" << n << ";\n";
        s << "            kfRegion(" << regionArguments("x_", "", "i") << ");\n";
        for (std::size_t n = 0; n < nout; ++n)
            s << "            " << m_outputs[n].name << "[i] = kfStore_" << m_outputs[n].name << "(y" << n << ");\n";
        s << "        }\n    }\n";
    }
    s << "}\n";

    const std::int64_t perBlock = static_cast<std::int64_t>(threads) * items;
    const std::int64_t grid = std::clamp<std::int64_t>((m_numel / v + perBlock - 1) / perBlock, 1, 2147483647LL);
    std::vector<std::string> args;
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list)
            args.push_back(o.token);
    return Candidate{s.str(), {{"launches", nlohmann::json::array({launchJson(kernel, grid, threads, args)})}}};
}

} // namespace kforge::core
