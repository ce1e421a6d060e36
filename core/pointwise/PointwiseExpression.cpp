#include "pointwise/PointwiseExpression.h"

#include "pointwise/CudaLiteral.h"
#include "pointwise/DtypePromotion.h"
#include "pointwise/PointwiseFormulas.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>

namespace kforge::core {

namespace {

bool isComputeDtype(const std::string& dtype)
{
    return dtype == "float32" || dtype == "float16" || dtype == "bfloat16";
}

bool isHalfWidth(const std::string& dtype)
{
    return dtype == "float16" || dtype == "bfloat16";
}

bool isIntegerDtype(const std::string& dtype)
{
    return dtypeCategory(dtype) == DtypeCategory::Integer;
}

// What an input may be: a float tensor, a bool (a where's condition, or 0 / 1 in arithmetic), or a
// 0-dim float64 (a traced Python number kept as a tensor), read as float as eager casts it; with
// `integers`, an integer tensor too.
std::string inputProblem(const TensorSpec& t, bool integers)
{
    if (isComputeDtype(t.dtype) || t.dtype == "bool" || (t.dtype == "float64" && t.sizes.empty()) ||
        (integers && isIntegerDtype(t.dtype)))
        return "";
    return t.dtype + (t.sizes.empty() ? " 0-dim tensor" : " tensor") + " not covered (float32, float16, bfloat16; " +
        (integers ? "int64, int32, int16, int8, uint8; " : "") + "bool; float64 0-dim)";
}

// A Python scalar's exact integer value: an int's, a bool's 0 / 1, or a float truncated toward zero
// (as eager converts a float scalar into an integer dtype); nullopt for a float no int64 holds.
std::optional<std::int64_t> scalarInteger(const nlohmann::json& v, double value)
{
    if (v.is_boolean())
        return v.get<bool>() ? 1 : 0;
    if (v.is_number_integer())
        return v.get<std::int64_t>();
    if (!std::isfinite(value) || value <= -9223372036854775808.0 || value >= 9223372036854775808.0)
        return std::nullopt;
    return static_cast<std::int64_t>(value);
}

// `v` converted into integer dtype `dtype` as C++ (and eager) converts it: the low bits.
std::int64_t wrapInteger(std::int64_t v, const std::string& dtype)
{
    const auto u = static_cast<std::uint64_t>(v);
    if (dtype == "int32")
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(u));
    if (dtype == "int16")
        return static_cast<std::int16_t>(static_cast<std::uint16_t>(u));
    if (dtype == "int8")
        return static_cast<std::int8_t>(static_cast<std::uint8_t>(u));
    if (dtype == "uint8")
        return static_cast<std::uint8_t>(u);
    return v;
}

std::string integerLiteral(std::int64_t v)
{
    if (v == std::numeric_limits<std::int64_t>::min())
        return "(-9223372036854775807LL - 1LL)";
    return std::to_string(v) + "LL";
}

// An expression of a value of `from` (carried as pointwiseValueType(from)) converted into integer
// dtype `to`: an integer keeps its low bits; a float (or bool 0 / 1) is truncated toward zero
// through int64, as c10 converts into uint8 (and, in range, into every integer type).
std::string toInteger(const std::string& expr, const std::string& from, const std::string& to)
{
    const std::string type = pointwiseValueType(to);
    if (isIntegerDtype(from))
        return from == to ? expr : "static_cast<" + type + ">(" + expr + ")";
    return "static_cast<" + type + ">(static_cast<long long>(" + expr + "))";
}

// The dtype a Python scalar stands for in promotion.
std::string scalarDtype(const nlohmann::json& v)
{
    if (v.is_boolean())
        return "bool";
    if (v.is_number_integer())
        return "int64";
    return "float32";
}

// A Python scalar's value: a number, a bool, or a non-finite float as the capture spells it in JSON
// ("inf", "-inf", "nan"); nullopt for anything else.
std::optional<double> scalarValue(const nlohmann::json& v)
{
    if (v.is_boolean()) // nlohmann's get<double>() throws on a bool
        return v.get<bool>() ? 1.0 : 0.0;
    if (v.is_number())
        return v.get<double>();
    if (v == "inf")
        return std::numeric_limits<double>::infinity();
    if (v == "-inf")
        return -std::numeric_limits<double>::infinity();
    if (v == "nan")
        return std::numeric_limits<double>::quiet_NaN();
    return std::nullopt;
}

const ArgSpec* findArg(const ChainMember& member, std::string_view name, std::size_t& index)
{
    for (index = 0; index < member.args.size(); ++index)
        if (member.args[index].name == name)
            return &member.args[index];
    return nullptr;
}

} // namespace

std::string pointwiseValueType(const std::string& dtype)
{
    const char* integer = integerCType(dtype);
    return integer ? integer : "float";
}

int PointwiseExpression::narrowed(int id, const std::string& dtype)
{
    // A float or (c10 converting through float) an integer value; bools are 0 / 1 in any dtype.
    const PointwiseNode& from = m_nodes[static_cast<std::size_t>(id)];
    const DtypeCategory category = dtypeCategory(from.dtype);
    if (from.dtype == dtype ||
        (from.kind != PointwiseNode::Kind::Constant && category != DtypeCategory::Floating &&
         category != DtypeCategory::Integer))
        return id;
    PointwiseNode n;
    n.kind = PointwiseNode::Kind::Apply;
    n.op = findPointwiseOp("aten::_to_copy", "", {}).value();
    n.operands = {id};
    n.dtype = dtype;
    n.common = dtype;
    n.round = true;
    return intern(std::move(n));
}

int PointwiseExpression::intern(PointwiseNode node)
{
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        const PointwiseNode& n = m_nodes[i];
        if (n.kind == node.kind && n.input == node.input && n.context == node.context && n.cat == node.cat &&
            std::memcmp(&n.constant, &node.constant, sizeof(double)) == 0 && n.integer == node.integer &&
            n.op == node.op && n.operands == node.operands && n.dtype == node.dtype && n.common == node.common &&
            n.round == node.round && n.reduce == node.reduce && n.reducedDims == node.reducedDims &&
            n.groups == node.groups && n.view == node.view)
            return static_cast<int>(i);
    }
    m_nodes.push_back(std::move(node));
    return static_cast<int>(m_nodes.size()) - 1;
}

Result<PointwiseExpression> PointwiseExpression::fromRegion(const OperatorCard& card, const PointwiseOptions& options)
{
    const auto refuse = [](const std::string& why) { return makeError(ErrorCode::Unsupported, why); };
    if (!card.region)
        return refuse("not a region card");
    const RegionChain& chain = *card.region;
    PointwiseExpression e;
    e.m_inputCount = static_cast<int>(card.args.size());
    e.m_integers = options.integers;
    for (std::size_t k = 0; k < card.args.size(); ++k) {
        if (card.args[k].kind != ArgKind::Tensor || card.args[k].tensors.size() != 1)
            return refuse("region argument " + card.args[k].name + " is not one tensor");
        if (const std::string why = inputProblem(card.args[k].tensors[0], options.integers); !why.empty())
            return refuse("region input " + card.args[k].name + ": " + why);
    }
    std::vector<std::vector<int>> memberNodes(chain.members.size());
    // Values an in-place member has overwritten (its self), and by which member: a later read of
    // one would see eager's written value, not the one the source names.
    std::vector<std::pair<ChainSource, std::size_t>> overwritten;
    // The node a member's tensor reads.
    const auto sourceNode = [&](const ChainSource& source, const std::string& label) -> Result<int> {
        for (const auto& [value, writer] : overwritten)
            if (value == source)
                return refuse(label + ": reads a value member " + std::to_string(writer) + " overwrote in place");
        if (source.fromMember) {
            const int node =
                memberNodes.at(static_cast<std::size_t>(source.index)).at(static_cast<std::size_t>(source.output));
            if (e.m_nodes[static_cast<std::size_t>(node)].kind == PointwiseNode::Kind::Position)
                return refuse(label + ": reads an index reduction's int64 indices (integer tensors are not covered)");
            return node;
        }
        PointwiseNode input;
        input.input = source.index;
        input.dtype = card.args.at(static_cast<std::size_t>(source.index)).tensors[0].dtype;
        return e.intern(std::move(input));
    };
    // The node a member's one-tensor argument `a` reads.
    const auto tensorNode = [&](const ChainMember& member, std::size_t a, const std::string& label) {
        return sourceNode(member.sources[a][0], label);
    };
    const auto isOneTensor = [](const ChainMember& member, std::size_t a) {
        return member.args[a].kind == ArgKind::Tensor && member.args[a].tensors.size() == 1 &&
            a < member.sources.size() && member.sources[a].size() == 1;
    };
    for (std::size_t m = 0; m < chain.members.size(); ++m) {
        const ChainMember& member = chain.members[m];
        const std::string label = "member " + std::to_string(m) + " (" + member.op.substr(member.op.find(':') + 2) +
            (member.overload.empty() ? "" : "." + member.overload) + ")";
        if (options.rowReductions && isRowReductionOp(member.op)) {
            std::vector<int> argNodes(member.args.size(), -1);
            for (std::size_t a = 0; a < member.args.size(); ++a)
                if (isOneTensor(member, a)) {
                    auto node = tensorNode(member, a, label);
                    if (!node)
                        return node.error();
                    argNodes[a] = node.value();
                }
            auto result = e.addRowReduction(member, static_cast<int>(m), label, argNodes);
            if (!result)
                return result.error();
            memberNodes[m] = std::move(result.value());
            continue;
        }
        if (options.concatenation && member.op == "aten::cat" && !member.args.empty() &&
            member.args[0].kind == ArgKind::TensorList && !member.sources.empty() &&
            member.sources[0].size() == member.args[0].tensors.size()) {
            std::vector<int> branches;
            for (const ChainSource& source : member.sources[0]) {
                auto node = sourceNode(source, label);
                if (!node)
                    return node.error();
                branches.push_back(node.value());
            }
            auto cat = e.addCat(member, label, branches);
            if (!cat)
                return cat.error();
            memberNodes[m] = {cat.value()};
            continue;
        }
        auto row = findPointwiseOp(member.op, member.overload, member.args);
        if (!row)
            return refuse("member " + std::to_string(m) + ": " + row.error().message);
        const PointwiseOpRow& op = *row.value();
        if (member.outputs.size() != 1)
            return refuse(label + ": expected one output");
        PointwiseNode apply;
        apply.kind = PointwiseNode::Kind::Apply;
        apply.op = &op;
        std::vector<PromotionOperand> promoted;
        std::vector<std::size_t> promotedTensors; // positions in apply.operands
        for (const PointwiseOperand& operand : op.operands) {
            std::size_t a = 0;
            const ArgSpec* arg = findArg(member, operand.name, a);
            if (!arg || arg->kind == ArgKind::None) {
                // Only an operand whose formula has a default (alpha, negative_slope) may be absent.
                if ((operand.promoted || operand.inCommonDtype) && !operand.optional)
                    return refuse(label + ": no argument '" + std::string(operand.name) + "'");
                apply.operands.push_back(-1); // alpha, negative_slope: the formula's default
                continue;
            }
            int node = -1;
            PromotionOperand p;
            if (isOneTensor(member, a)) {
                auto tensor = tensorNode(member, a, label);
                if (!tensor)
                    return tensor.error();
                node = tensor.value();
                p = {e.m_nodes[static_cast<std::size_t>(node)].dtype,
                     arg->tensors[0].sizes.empty() ? OperandRank::ZeroDim : OperandRank::Dimensioned};
            } else if (arg->kind == ArgKind::Value && scalarValue(arg->value)) {
                PointwiseNode constant;
                constant.kind = PointwiseNode::Kind::Constant;
                constant.constant = *scalarValue(arg->value);
                constant.integer = scalarInteger(arg->value, constant.constant).value_or(0);
                constant.dtype = scalarDtype(arg->value);
                p = {constant.dtype, OperandRank::PythonScalar};
                node = e.intern(std::move(constant));
            } else {
                return refuse(label + ": argument '" + std::string(operand.name) + "' is " + arg->toShortString() +
                              " (a tensor or a number expected)");
            }
            apply.operands.push_back(node);
            if (operand.promoted) {
                promoted.push_back(p);
                if (p.rank != OperandRank::PythonScalar)
                    promotedTensors.push_back(apply.operands.size() - 1);
            }
        }
        const std::string produced = member.outputs[0].dtype;
        // Eager's kernel reads every operand in the op's common dtype.
        const std::string common = resultType(promoted);
        std::string dtype;
        if (op.result == PointwiseResult::Cast)
            dtype = produced;
        else if (isInPlaceOpName(member.op)) {
            dtype = e.m_nodes[static_cast<std::size_t>(apply.operands[0])].dtype; // written into self
            if (!member.sources.empty() && member.sources.front().size() == 1)
                overwritten.emplace_back(member.sources.front().front(), m);
        } else if (op.result == PointwiseResult::Bool) {
            dtype = "bool";
        } else {
            dtype = common;
            if (op.result == PointwiseResult::PromoteToFloat && dtypeCategory(dtype) != DtypeCategory::Floating)
                dtype = "float32";
        }
        if (dtype != produced)
            return refuse(label + ": promotion gives " + (dtype.empty() ? "no dtype" : dtype) +
                          " where eager produced " + produced);
        if (!isComputeDtype(dtype) && dtype != "bool" && !(options.integers && isIntegerDtype(dtype)))
            return refuse(label + ": result dtype " + dtype + " not covered (float32, float16, bfloat16, " +
                          (options.integers ? "int64, int32, int16, int8, uint8, " : "") + "bool)");
        apply.common = op.result == PointwiseResult::Cast ? dtype
            : op.result == PointwiseResult::PromoteToFloat && dtypeCategory(common) != DtypeCategory::Floating
            ? "float32"
            : common;
        if (options.integers && op.result != PointwiseResult::Cast && isIntegerDtype(apply.common)) {
            // Computed exactly in the integer common dtype, or refused: never through fp32.
            if (!op.integer)
                return refuse(label + ": " + apply.common + " operands not covered (" + std::string(op.name) +
                              " has no integer form)");
            // A float scalar (masked_fill's value) is truncated into it: NaN, inf and beyond int64 have no value.
            for (const int operand : apply.operands) {
                if (operand < 0)
                    continue;
                const PointwiseNode& o = e.m_nodes[static_cast<std::size_t>(operand)];
                if (o.kind == PointwiseNode::Kind::Constant && o.dtype == "float32" &&
                    !scalarInteger(nlohmann::json(o.constant), o.constant))
                    return refuse(label + ": scalar " + std::to_string(o.constant) + " has no " + apply.common +
                                  " value");
            }
        }
        // A wider tensor operand (a float32 or float64 0-dim tensor times bfloat16 activations) is
        // rounded to the common dtype first. Python scalars go straight to opmath, except those the
        // op converts to its scalar_t (inCommonDtype): part of the op's semantics, always rounded.
        if (op.result != PointwiseResult::Cast && isHalfWidth(common)) {
            for (const std::size_t i : promotedTensors)
                if (options.roundIntermediates)
                    apply.operands[i] = e.narrowed(apply.operands[i], common);
            for (std::size_t i = 0; i < op.operands.size(); ++i)
                if (op.operands[i].inCommonDtype && apply.operands[i] >= 0 &&
                    e.m_nodes[static_cast<std::size_t>(apply.operands[i])].kind == PointwiseNode::Kind::Constant)
                    apply.operands[i] = e.narrowed(apply.operands[i], common);
        }
        apply.dtype = dtype;
        apply.round = options.roundIntermediates && isHalfWidth(dtype);
        memberNodes[m] = {e.intern(std::move(apply))};
    }
    for (std::size_t o = 0; o < chain.outputs.size(); ++o) {
        const ChainSource& source = chain.outputs[o];
        if (!source.fromMember)
            return refuse("region output " + std::to_string(o) + " is a region input (nothing to compute)");
        const int node =
            memberNodes.at(static_cast<std::size_t>(source.index)).at(static_cast<std::size_t>(source.output));
        if (o >= card.outputs.size() || card.outputs[o].dtype != e.m_nodes[static_cast<std::size_t>(node)].dtype)
            return refuse("region output " + std::to_string(o) + " does not have its member's dtype");
        e.m_outputs.push_back(node);
    }
    if (e.m_outputs.empty())
        return refuse("the region has no output");
    for (const std::vector<int>& nodes : memberNodes)
        e.m_memberNodes.push_back(nodes.at(0));
    return e;
}

std::vector<bool> PointwiseExpression::dependencies(const std::vector<int>& roots,
                                                    const std::vector<bool>& leaves) const
{
    std::vector<bool> used(m_nodes.size(), false);
    for (int r : roots)
        used[static_cast<std::size_t>(r)] = true;
    // Operands precede their users (interned in chain order), so one backward pass is enough.
    for (std::size_t i = m_nodes.size(); i-- > 0;)
        if (used[i] && !(i < leaves.size() && leaves[i]))
            for (int operand : m_nodes[i].operands)
                if (operand >= 0)
                    used[static_cast<std::size_t>(operand)] = true;
    return used;
}

std::vector<bool> PointwiseExpression::live() const
{
    return dependencies(m_outputs);
}

bool PointwiseExpression::hasReductions() const
{
    return std::any_of(m_nodes.begin(), m_nodes.end(),
                       [](const PointwiseNode& n) { return n.kind == PointwiseNode::Kind::Reduce; });
}

bool PointwiseExpression::inputUsed(int k) const
{
    const std::vector<PointwiseInputRead> reads = inputReads();
    return std::find(reads.begin(), reads.end(), PointwiseInputRead{k, -1}) != reads.end();
}

std::vector<PointwiseInputRead> PointwiseExpression::inputReads() const
{
    const std::vector<bool> used = live();
    std::vector<PointwiseInputRead> reads;
    for (std::size_t i = 0; i < m_nodes.size(); ++i)
        if (used[i] && m_nodes[i].kind == PointwiseNode::Kind::Input) {
            const PointwiseInputRead read{m_nodes[i].input, m_nodes[i].context};
            if (std::find(reads.begin(), reads.end(), read) == reads.end())
                reads.push_back(read);
        }
    std::sort(reads.begin(), reads.end(), [](const PointwiseInputRead& a, const PointwiseInputRead& b) {
        return std::pair(a.context, a.input) < std::pair(b.context, b.input);
    });
    return reads;
}

std::string PointwiseExpression::readName(const PointwiseInputRead& read)
{
    return "x" + std::to_string(read.input) + (read.context < 0 ? "" : "_b" + std::to_string(read.context));
}

bool PointwiseExpression::catUsed(int c) const
{
    const int node = m_cats.at(static_cast<std::size_t>(c)).node;
    return node >= 0 && live()[static_cast<std::size_t>(node)];
}

Result<int> PointwiseExpression::inBranch(int id, int context, std::vector<int>& copies)
{
    if (copies[static_cast<std::size_t>(id)] >= 0)
        return copies[static_cast<std::size_t>(id)];
    PointwiseNode n = m_nodes[static_cast<std::size_t>(id)];
    switch (n.kind) {
    case PointwiseNode::Kind::Constant:
        return id;
    case PointwiseNode::Kind::Input:
        n.context = n.context < 0 ? context : contextWithin(n.context, context);
        break;
    case PointwiseNode::Kind::Cat:
        n.cat = catWithin(n.cat, context);
        [[fallthrough]];
    case PointwiseNode::Kind::Apply:
        for (int& operand : n.operands)
            if (operand >= 0) {
                auto copy = inBranch(operand, context, copies);
                if (!copy)
                    return copy;
                operand = copy.value();
            }
        break;
    default:
        return makeError(ErrorCode::Unsupported, "a cat of a reduction is not covered");
    }
    const bool cat = n.kind == PointwiseNode::Kind::Cat;
    const int catIndex = n.cat;
    const int copy = intern(std::move(n));
    copies[static_cast<std::size_t>(id)] = copy;
    if (cat)
        m_cats[static_cast<std::size_t>(catIndex)].node = copy;
    return copy;
}

int PointwiseExpression::contextWithin(int c, int context)
{
    if (const auto found = m_contextsWithin.find({c, context}); found != m_contextsWithin.end())
        return found->second;
    const PointwiseBranchContext original = m_contexts[static_cast<std::size_t>(c)];
    const int cat = catWithin(original.cat, context);
    m_contexts.push_back(PointwiseBranchContext{cat, original.branch});
    const int copy = static_cast<int>(m_contexts.size()) - 1;
    m_contextsWithin[{c, context}] = copy;
    return copy;
}

int PointwiseExpression::catWithin(int k, int context)
{
    if (const auto found = m_catsWithin.find({k, context}); found != m_catsWithin.end())
        return found->second;
    PointwiseCat copy = m_cats[static_cast<std::size_t>(k)];
    copy.context = copy.context < 0 ? context : contextWithin(copy.context, context);
    copy.node = -1; // set when its Cat node is made
    m_cats.push_back(std::move(copy));
    const int index = static_cast<int>(m_cats.size()) - 1;
    m_catsWithin[{k, context}] = index;
    return index;
}

Result<int> PointwiseExpression::addCat(const ChainMember& member, const std::string& label,
                                        const std::vector<int>& branches)
{
    const auto refuse = [&label](const std::string& why) {
        return makeError(ErrorCode::Unsupported, label + ": " + why);
    };
    if (member.outputs.size() != 1)
        return refuse("expected one output");
    const TensorSpec& out = member.outputs[0];
    const auto rank = static_cast<std::int64_t>(out.sizes.size());
    std::size_t a = 0;
    const ArgSpec* dimArg = findArg(member, "dim", a);
    const std::int64_t dim = dimArg && dimArg->kind == ArgKind::Value && dimArg->value.is_number_integer()
        ? dimArg->value.get<std::int64_t>()
        : 0;
    if (rank == 0 || dim < -rank || dim >= rank)
        return refuse("dim " + std::to_string(dim) + " out of range for " + out.toShortString());
    PointwiseCat cat;
    cat.dim = static_cast<std::size_t>(dim < 0 ? dim + rank : dim);
    cat.sizes = out.sizes;
    cat.bounds = {0};
    std::vector<int> kept;
    const std::vector<TensorSpec>& tensors = member.args[0].tensors;
    for (std::size_t b = 0; b < tensors.size(); ++b) {
        const TensorSpec& t = tensors[b];
        // Eager skips an empty tensor (a legacy 1-D [0] of any rank, too).
        if (t.numel() == 0)
            continue;
        if (t.dtype != out.dtype)
            return refuse("a cat of " + t.dtype + " into " + out.dtype + " is not covered");
        if (t.sizes.size() != out.sizes.size())
            return refuse("tensor " + t.toShortString() + " has another rank than " + out.toShortString());
        for (std::size_t d = 0; d < t.sizes.size(); ++d)
            if (d != cat.dim && t.sizes[d] != out.sizes[d])
                return refuse("tensor " + t.toShortString() + " does not match " + out.toShortString());
        cat.bounds.push_back(cat.bounds.back() + t.sizes[cat.dim]);
        kept.push_back(branches.at(b));
    }
    if (kept.empty() || cat.bounds.back() != out.sizes[cat.dim])
        return refuse("the tensors do not add up to " + out.toShortString());
    if (kept.size() == 1)
        return kept.front(); // a copy of its one non-empty tensor
    // The cat is listed first: a cat in one of its branches adds its copies after it.
    m_cats.push_back(std::move(cat));
    const int index = static_cast<int>(m_cats.size()) - 1;
    PointwiseNode node;
    node.kind = PointwiseNode::Kind::Cat;
    node.cat = index;
    node.dtype = out.dtype;
    for (std::size_t b = 0; b < kept.size(); ++b) {
        m_contexts.push_back(PointwiseBranchContext{index, static_cast<int>(b)});
        std::vector<int> copies(m_nodes.size(), -1);
        auto branch = inBranch(kept[b], static_cast<int>(m_contexts.size()) - 1, copies);
        if (!branch)
            return refuse(branch.error().message);
        node.operands.push_back(branch.value());
    }
    const int id = intern(std::move(node));
    m_cats[static_cast<std::size_t>(index)].node = id;
    return id;
}

int PointwiseExpression::liveOps() const
{
    const std::vector<bool> used = live();
    int count = 0;
    for (std::size_t i = 0; i < m_nodes.size(); ++i)
        count += used[i] && m_nodes[i].kind == PointwiseNode::Kind::Apply;
    return count;
}

bool PointwiseExpression::needsHalf() const
{
    return std::any_of(m_nodes.begin(), m_nodes.end(), [](const PointwiseNode& n) { return n.dtype == "float16"; });
}

bool PointwiseExpression::needsBfloat16() const
{
    return std::any_of(m_nodes.begin(), m_nodes.end(), [](const PointwiseNode& n) { return n.dtype == "bfloat16"; });
}

bool PointwiseExpression::hasIntegers() const
{
    return std::any_of(m_nodes.begin(), m_nodes.end(), [this](const PointwiseNode& n) {
        return m_integers && (isIntegerDtype(n.dtype) || isIntegerDtype(n.common));
    });
}

bool PointwiseExpression::integerMath(const PointwiseNode& n) const
{
    return m_integers && n.kind == PointwiseNode::Kind::Apply && isIntegerDtype(n.common);
}

std::string PointwiseExpression::helpers() const
{
    std::string s = pointwiseHelpers();
    if (hasIntegers())
        s += formulas::integerHelpers();
    if (needsHalf())
        s += "__device__ __forceinline__ float kfRoundHalf(float v) { return __half2float(__float2half_rn(v)); }\n";
    if (needsBfloat16())
        s += "__device__ __forceinline__ float kfRoundBfloat16(float v) { return "
             "__bfloat162float(__float2bfloat16_rn(v)); }\n";
    return s;
}

std::string PointwiseExpression::integerExpression(const PointwiseNode& n,
                                                   const std::function<std::string(int)>& operandName) const
{
    if (n.op->result == PointwiseResult::Cast) {
        const PointwiseNode& from = m_nodes[static_cast<std::size_t>(n.operands[0])];
        return toInteger(operandName(n.operands[0]), from.dtype, n.dtype);
    }
    // Every operand eager reads in the common dtype (the promoted ones, a scalar it converts to its
    // scalar_t, every Python scalar) is converted into it first; a condition or mask stays 0 / 1.
    std::vector<FormulaOperand> operands;
    for (std::size_t i = 0; i < n.operands.size(); ++i) {
        const int operand = n.operands[i];
        if (operand < 0) {
            operands.emplace_back();
            continue;
        }
        const PointwiseNode& o = m_nodes[static_cast<std::size_t>(operand)];
        const PointwiseOperand& spec = n.op->operands.at(i);
        if (o.kind == PointwiseNode::Kind::Constant) {
            const std::int64_t v = wrapInteger(o.integer, n.common);
            operands.push_back(FormulaOperand{integerLiteral(v), static_cast<double>(v)});
        } else if (spec.promoted || spec.inCommonDtype) {
            // As a long long whatever the common type: the integer forms compute in long long, and a
            // comparison of a narrower type would draw compiler warnings (uint8 < 0).
            std::string value = toInteger(operandName(operand), o.dtype, n.common);
            if (n.common != "int64")
                value = "static_cast<long long>(" + value + ")";
            operands.push_back(FormulaOperand{value, std::nullopt});
        } else {
            operands.push_back(FormulaOperand{operandName(operand), std::nullopt});
        }
    }
    const std::string value = n.op->integer(operands);
    if (n.dtype == "bool")
        return n.op->result == PointwiseResult::Bool ? value : "(" + value + " != 0 ? 1.0f : 0.0f)";
    return "static_cast<" + pointwiseValueType(n.dtype) + ">(" + value + ")"; // the low bits, as eager wraps
}

std::string PointwiseExpression::applyExpression(int id, const std::function<std::string(int)>& operandName) const
{
    const PointwiseNode& n = m_nodes.at(static_cast<std::size_t>(id));
    if (integerMath(n))
        return integerExpression(n, operandName);
    std::vector<FormulaOperand> operands;
    for (int operand : n.operands) {
        if (operand < 0) {
            operands.emplace_back();
            continue;
        }
        const PointwiseNode& o = m_nodes[static_cast<std::size_t>(operand)];
        if (o.kind == PointwiseNode::Kind::Constant)
            operands.push_back(FormulaOperand{floatLiteral(o.constant), o.constant});
        else if (m_integers && isIntegerDtype(o.dtype)) // to fp32 as c10 converts: round to nearest
            operands.push_back(FormulaOperand{"static_cast<float>(" + operandName(operand) + ")", std::nullopt});
        else
            operands.push_back(FormulaOperand{operandName(operand), std::nullopt});
    }
    std::string value = n.op->formula(operands);
    // A bool is 0 / 1 to every later op (add of two bools is true, not 2); Bool rows give 0 / 1.
    if (n.dtype == "bool" && n.op->result != PointwiseResult::Bool)
        value = "(" + value + " != 0.0f ? 1.0f : 0.0f)";
    if (n.round)
        return (n.dtype == "float16" ? "kfRoundHalf(" : "kfRoundBfloat16(") + value + ")";
    return value;
}

std::string PointwiseExpression::elementFunction(const std::string& name) const
{
    const std::vector<bool> used = live();
    // The type a node's value is carried in (an integer in its own C type, without options.integers float).
    const auto typeOf = [this](const PointwiseNode& n) {
        return m_integers ? pointwiseValueType(n.dtype) : std::string("float");
    };
    std::ostringstream s;
    s << helpers();
    s << "// Every region output of one element from the values of the inputs it reads, in fp32 (integers\n"
      << "// exactly, in their own types); a 16-bit op result is rounded to its dtype where eager materializes it.\n"
      << "__device__ __forceinline__ void " << name << "(";
    for (const PointwiseInputRead& read : inputReads()) {
        const PointwiseNode& input = *std::find_if(m_nodes.begin(), m_nodes.end(), [&read](const PointwiseNode& n) {
            return n.kind == PointwiseNode::Kind::Input && n.input == read.input && n.context == read.context;
        });
        s << "const " << typeOf(input) << " " << readName(read) << ", ";
    }
    for (std::size_t c = 0; c < m_cats.size(); ++c)
        if (m_cats[c].node >= 0 && used[static_cast<std::size_t>(m_cats[c].node)]) // catUsed, live() known
            s << "const long long kfc" << c << ", ";
    for (std::size_t o = 0; o < m_outputs.size(); ++o)
        s << typeOf(m_nodes[static_cast<std::size_t>(m_outputs[o])]) << "& y" << o
          << (o + 1 < m_outputs.size() ? ", " : ")\n{\n");
    const auto name_of = [](int id) { return "v" + std::to_string(id); };
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        const PointwiseNode& n = m_nodes[i];
        if (!used[i] || n.kind == PointwiseNode::Kind::Constant)
            continue;
        s << "    const " << typeOf(n) << " v" << i << " = ";
        if (n.kind == PointwiseNode::Kind::Input) {
            s << readName({n.input, n.context}) << ";\n";
            continue;
        }
        if (n.kind == PointwiseNode::Kind::Cat) {
            // The branch the coordinate falls in: each branch ends where the next starts.
            const PointwiseCat& cat = m_cats[static_cast<std::size_t>(n.cat)];
            for (std::size_t b = 0; b + 1 < n.operands.size(); ++b)
                s << "kfc" << n.cat << " < " << cat.bounds[b + 1] << "LL ? " << name_of(n.operands[b]) << " : ";
            s << name_of(n.operands.back()) << "; // cat -> " << n.dtype << "\n";
            continue;
        }
        s << applyExpression(static_cast<int>(i), name_of) << "; // " << n.op->name << " -> " << n.dtype << "\n";
    }
    for (std::size_t o = 0; o < m_outputs.size(); ++o) {
        const PointwiseNode& n = m_nodes[static_cast<std::size_t>(m_outputs[o])];
        std::string value = name_of(m_outputs[o]);
        if (n.kind == PointwiseNode::Kind::Constant)
            value = typeOf(n) == "float" ? floatLiteral(n.constant) : integerLiteral(n.integer);
        s << "    y" << o << " = " << value << ";\n";
    }
    s << "}\n";
    return s.str();
}

} // namespace kforge::core
