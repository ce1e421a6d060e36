#include "builtin_proposer/RowRegionFamily.h"

#include "builtin_proposer/RowRegionCode.h"
#include "regions/RegionOperatorCard.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace kforge::core {

namespace {

using Kind = PointwiseNode::Kind;

constexpr int kMaxElementsPerThread = 32;

const std::vector<Knob> kKnobs = {{"threads", "threads-per-row", "", ""},
                                  {"rows_per_block", "rows-per-block", "", ""},
                                  {"vector_width", "vector-width", "", ""},
                                  {"split", "split-rows", "", ""},
                                  {"columns", "", "thread-per-row", "threads-across-row"},
                                  {"column_parts", "column-parts", "", ""}};

// Rows a column kernel needs before one thread per row fills a GPU better than a warp per row:
// 32 blocks of 128 threads.
constexpr std::int64_t kRowsForColumns = 4096;
// Threads a large GPU keeps in flight: 2048 on each of a 132-SM H100's / H200's SMs. A column
// kernel with fewer rows than half of this lets threads share a row (column_parts), up to kMaxParts
// of at least kMinPartLength elements each; a split row aims at this many threads, so that enough
// loads are in flight to reach memory bandwidth.
constexpr std::int64_t kThreadsToFill = 132 * 2048;
constexpr int kMaxParts = 8;
constexpr std::int64_t kMinPartLength = 8;

// Blocks of a row-per-block kernel a large GPU needs, about: two per SM of a 132-SM H100 / H200;
// fewer rows than half of it are "few" (a split row's start).
constexpr std::int64_t kBlocksToFill = 264;
constexpr int kMaxSplit = 1024;

const TensorSpec* reducedTensor(const ChainMember& member)
{
    for (const ArgSpec& arg : member.args)
        if ((arg.name == "self" || arg.name == "input") && arg.kind == ArgKind::Tensor && arg.tensors.size() == 1)
            return &arg.tensors[0];
    return nullptr;
}

std::int64_t product(const std::vector<std::int64_t>& v)
{
    return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
}

} // namespace

Result<std::unique_ptr<RowRegionFamily>> RowRegionFamily::create(const OperatorCard& card)
{
    auto expression = PointwiseExpression::fromRegion(card, PointwiseOptions{true, true});
    if (!expression)
        return unsupportedCard(card, expression.error().message);
    if (!expression->hasReductions())
        return unsupportedCard(card, "the chain reduces no row (a pointwise region)");
    std::unique_ptr<RowRegionFamily> f(new RowRegionFamily(std::move(expression.value())));
    const PointwiseExpression& e = f->m_expression;
    const RegionChain& chain = *card.region;
    f->m_chain = chain.text();
    const std::vector<PointwiseNode>& nodes = e.nodes();

    // The row shape: the tensor every reduction reduces, its dims ordered outer dims first (those
    // not reduced, in order) and then the reduced ones, which make the row: a reduction over a middle
    // or leading dim walks its row at that dim's stride. A group_norm's [N, C, *] is seen as
    // [N, groups, C / groups, *], a row per (n, group).
    std::vector<std::int64_t> tensorShape;
    std::vector<std::int64_t> reduced;
    bool seen = false;
    std::int64_t groups = 0;
    for (const PointwiseNode& n : nodes) {
        if (n.kind != Kind::Reduce)
            continue;
        const TensorSpec* t = reducedTensor(chain.members.at(static_cast<std::size_t>(n.member)));
        if (!t)
            return unsupportedCard(card, "a reduction without its input tensor");
        if (!seen) {
            seen = true;
            tensorShape = t->sizes;
            reduced = n.reducedDims;
            groups = n.groups;
        } else if (t->sizes != tensorShape || n.reducedDims != reduced || n.groups != groups) {
            return unsupportedCard(card, "reductions over rows of different shapes");
        }
    }
    if (reduced.empty() || reduced.size() > tensorShape.size() || reduced.back() >= std::ssize(tensorShape))
        return unsupportedCard(card, "a reduction over more dims than its input has");
    const auto rowRank = static_cast<long>(reduced.size());
    std::vector<std::size_t> dimOrder; // row shape dim -> tensor dim
    for (std::size_t d = 0; d < tensorShape.size(); ++d)
        if (!std::binary_search(reduced.begin(), reduced.end(), static_cast<std::int64_t>(d)))
            dimOrder.push_back(d);
    for (std::int64_t d : reduced)
        dimOrder.push_back(static_cast<std::size_t>(d));
    const auto permuted = [&](const std::vector<std::int64_t>& v) {
        std::vector<std::int64_t> p(dimOrder.size());
        for (std::size_t i = 0; i < dimOrder.size(); ++i)
            p[i] = v[dimOrder[i]];
        return p;
    };
    std::vector<std::int64_t> shape = permuted(tensorShape);
    if (groups > 0) { // reduced is 1..rank-1: the order is the tensor's own
        shape[1] = tensorShape[1] / groups;
        shape.insert(shape.begin() + 1, groups);
    }
    // A tensor's strides over the row shape: broadcast against the reduced tensor, in the row
    // shape's order, its channel stride split into the group's and the channel's where grouped.
    const auto stridesOver = [&](const TensorSpec& t) -> std::optional<std::vector<std::int64_t>> {
        auto strides = broadcastStrides(t, tensorShape);
        if (!strides)
            return strides;
        strides = permuted(*strides);
        if (groups > 0)
            strides->insert(strides->begin() + 1, (*strides)[1] * shape[2]);
        return strides;
    };
    const auto outerRank = static_cast<long>(shape.size()) - rowRank;
    const std::vector<std::int64_t> rowDims(shape.begin() + outerRank, shape.end());
    f->m_rowLength = product(rowDims);
    f->m_outer.assign(shape.begin(), shape.begin() + outerRank);
    f->m_rows = product(f->m_outer);
    if (f->m_rowLength < 2 || f->m_rows == 0)
        return unsupportedCard(card, "rows of fewer than two elements, or no rows");
    if (f->m_rowLength > std::int64_t{2147483647} - 8192)
        return unsupportedCard(card, "rows of 2^31 elements or more are not covered (32-bit row columns)");
    const std::string& device = card.outputs.at(0).device;
    // An operand's strides over the row shape, split into the outer dims and the row's own.
    const auto split = [&](Operand& op, const std::vector<std::int64_t>& strides) {
        op.outerStrides.assign(strides.begin(), strides.begin() + outerRank);
        op.rowStrides.assign(strides.begin() + outerRank, strides.end());
    };
    const auto allZero = [](const std::vector<std::int64_t>& v) {
        return std::all_of(v.begin(), v.end(), [](std::int64_t s) { return s == 0; });
    };

    // Inputs: their strides over the row shape; one that does not vary along the row is a row value.
    const std::vector<bool> live = e.dependencies(e.outputs());
    for (std::size_t k = 0; k < card.args.size(); ++k) {
        const TensorSpec& in = card.args[k].tensors[0];
        if (in.device.rfind("cpu", 0) == 0 && device.rfind("cpu", 0) != 0)
            return unsupportedCard(card,
                                   "input " + card.args[k].name + " " + in.toShortString() +
                                       " is on the CPU (the kernel reads device memory)");
        // An input read at a view (group_norm's weight [C] as [C, 1, ...]) is read so everywhere.
        std::optional<std::vector<std::int64_t>> view;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const PointwiseNode& n = nodes[i];
            if (n.kind != Kind::Input || n.input != static_cast<int>(k) || !live[i])
                continue;
            if (view && *view != n.view)
                return unsupportedCard(card, "input " + card.args[k].name + " is read both per channel and otherwise");
            view = n.view;
        }
        TensorSpec read = in;
        if (view && !view->empty()) {
            if (in.sizes.size() != 1 || in.sizes[0] != view->front())
                return unsupportedCard(
                    card, "input " + card.args[k].name + " " + in.toShortString() + " is not one value per channel");
            read.sizes = *view;
            read.strides.assign(view->size(), 1);
            read.strides[0] = in.strides[0];
        }
        const auto strides = stridesOver(read);
        if (!strides)
            return unsupportedCard(
                card, "input " + card.args[k].name + " " + in.toShortString() + " does not broadcast to the row shape");
        Operand op;
        op.name = card.args[k].name;
        op.token = "ptr:" + op.name;
        op.dtype = in.dtype;
        op.used = e.inputUsed(static_cast<int>(k));
        split(op, *strides);
        op.perRow = allZero(op.rowStrides);
        f->m_inputs.push_back(std::move(op));
    }

    // Which node is one value per row.
    f->m_perRow.assign(nodes.size(), true);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const PointwiseNode& n = nodes[i];
        if (n.kind == Kind::Input)
            f->m_perRow[i] = f->m_inputs.at(static_cast<std::size_t>(n.input)).perRow;
        else if (n.kind == Kind::Apply)
            f->m_perRow[i] = std::all_of(n.operands.begin(), n.operands.end(),
                                         [&](int o) { return o < 0 || f->m_perRow[static_cast<std::size_t>(o)]; });
        else if (n.kind == Kind::Reduce && f->m_perRow[static_cast<std::size_t>(n.operands[0])])
            return unsupportedCard(card, "a reduction of a value that does not vary along the row");
    }

    // Every member's result must have the shape its kind says: an element value broadcasts to the
    // row shape, a row value has the keepdim shape or (an output only) the outer dims alone.
    std::vector<std::int64_t> keepdim = tensorShape; // a keepdim reduction's sizes
    for (std::int64_t d : reduced)
        keepdim[static_cast<std::size_t>(d)] = 1;
    std::vector<bool> withoutKeepdim(chain.members.size(), false);
    for (std::size_t m = 0; m < chain.members.size(); ++m) {
        const TensorSpec& out = chain.members[m].outputs.at(0);
        const auto strides = stridesOver(out);
        const bool perRow = f->m_perRow[static_cast<std::size_t>(e.memberNode(m))];
        const bool rowStridesZero =
            strides && allZero(std::vector<std::int64_t>(strides->begin() + outerRank, strides->end()));
        const bool fits = strides && (perRow ? rowStridesZero : !rowStridesZero);
        withoutKeepdim[m] = perRow && !fits && out.sizes == f->m_outer;
        if (!fits && !withoutKeepdim[m])
            return unsupportedCard(card,
                                   "member " + std::to_string(m) + " (" + chain.members[m].op + ") gives " +
                                       out.toShortString() + ", not a row-shaped value");
        for (const auto& sources : chain.members[m].sources)
            for (const ChainSource& source : sources)
                if (source.fromMember && withoutKeepdim.at(static_cast<std::size_t>(source.index)) && !perRow)
                    return unsupportedCard(
                        card, "member " + std::to_string(m) + " reads a reduction without keepdim along the row");
    }

    // Outputs: element values of the row shape, row values per row.
    for (std::size_t o = 0; o < card.outputs.size(); ++o) {
        const TensorSpec& out = card.outputs[o];
        Operand op;
        op.name = "out" + std::to_string(o);
        op.token = "ptr:" + op.name;
        op.dtype = out.dtype;
        op.output = true;
        op.node = e.outputs().at(o);
        op.perRow = f->m_perRow[static_cast<std::size_t>(op.node)];
        if (!denseStorageOrder(out))
            return unsupportedCard(card, "output " + out.toShortString() + " is not dense");
        if (op.perRow && groups == 0 && (out.sizes == keepdim || out.sizes == f->m_outer)) {
            // Keepdim: the strides of the dims not reduced, in order; without: the output's own.
            op.outerStrides = out.sizes == keepdim ? permuted(out.strides) : out.strides;
            op.outerStrides.resize(static_cast<std::size_t>(outerRank));
            op.rowStrides.assign(static_cast<std::size_t>(rowRank), 0);
        } else if (!op.perRow && out.sizes == tensorShape) {
            split(op, *stridesOver(out));
        } else {
            return unsupportedCard(card, "output " + out.toShortString() + " is neither the row shape nor one per row");
        }
        f->m_outputs.push_back(std::move(op));
    }

    // The row's dims merged where every operand steps through two as one (a contiguous [.., H, W]
    // row is one dim): each operand's offset along the row is then one multiply in the common case.
    std::vector<std::vector<std::int64_t>> rowStrides;
    for (const std::vector<Operand>* list : {&f->m_inputs, &f->m_outputs})
        for (const Operand& op : *list)
            rowStrides.push_back(op.rowStrides);
    std::vector<std::size_t> order(rowDims.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    MergedDims merged = mergeDims(order, rowDims, rowStrides);
    f->m_rowDims = merged.sizes;
    std::size_t next = 0;
    for (std::vector<Operand>* list : {&f->m_inputs, &f->m_outputs})
        for (Operand& op : *list)
            op.rowStrides = std::move(merged.strides[next++]);

    // Slots: element inputs in x[], element outputs in y[], live row values in rv[].
    int x = 0, y = 0;
    for (Operand& op : f->m_inputs)
        if (op.used && !op.perRow)
            op.slot = x++;
    for (Operand& op : f->m_outputs)
        if (!op.perRow)
            op.slot = y++;
    f->m_live = e.dependencies(e.outputs());
    f->m_rowSlot.assign(nodes.size(), -1);
    f->m_indexSlot.assign(nodes.size(), -1);
    f->m_stage.assign(nodes.size(), -1);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const PointwiseNode& n = nodes[i];
        // A Position node is its pair reduction's index, ri[] (valueName).
        if (!f->m_live[i] || !f->m_perRow[i] || n.kind == Kind::Constant || n.kind == Kind::Position)
            continue;
        f->m_rowSlot[i] = f->m_rowValues++;
        if (n.kind == Kind::Reduce) {
            f->m_stage[i] = static_cast<int>(f->m_reduces.size());
            f->m_reduces.push_back(static_cast<int>(i));
            if (isPairReduce(n.reduce))
                f->m_indexSlot[i] = f->m_indices++;
        } else {
            for (int o : n.operands)
                if (o >= 0)
                    f->m_stage[i] = std::max(f->m_stage[i], f->m_stage[static_cast<std::size_t>(o)]);
        }
    }
    if (f->m_reduces.empty())
        return unsupportedCard(card, "no output depends on the chain's reductions");
    // The element value each reduction reduces is kept in registers once its stage computed it, so
    // that the later stages and the outputs read it instead of computing its prologue again (a
    // softmax's exp once, not twice). Inputs are in registers already.
    f->m_cacheSlot.assign(nodes.size(), -1);
    f->m_cachedAt.assign(nodes.size(), -1);
    for (std::size_t k = 0; k < f->m_reduces.size(); ++k) {
        const auto operand = static_cast<std::size_t>(nodes[static_cast<std::size_t>(f->m_reduces[k])].operands[0]);
        if (f->m_perRow[operand] || nodes[operand].kind != Kind::Apply || f->m_cacheSlot[operand] >= 0)
            continue;
        f->m_cacheSlot[operand] = f->m_cached++;
        f->m_cachedAt[operand] = static_cast<int>(k);
    }
    return f;
}

Result<std::unique_ptr<RowRegionFamily>> RowRegionFamily::createForOp(const OperatorCard& card)
{
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
    return f;
}

bool RowRegionFamily::fewLongRows(std::int64_t rows, std::int64_t rowLength)
{
    return rows < kBlocksToFill / 2 && rowLength >= 8192;
}

int RowRegionFamily::elementInputs() const
{
    return static_cast<int>(
        std::count_if(m_inputs.begin(), m_inputs.end(), [](const Operand& o) { return o.used && !o.perRow; }));
}

bool RowRegionFamily::vectorWidthAllowed(int width) const
{
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return false;
    if (m_rowLength % width != 0)
        return false;
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list)
            if (o.used && !o.perRow && width * dtypeBytes(o.dtype) > 16)
                return false;
    return true;
}

bool RowRegionFamily::vectorMoves(const Operand& op, int width) const
{
    return width > 1 && m_rowDims.back() % width == 0 && stridesAllowVectors(op.rowStrides, width) &&
        std::all_of(op.outerStrides.begin(), op.outerStrides.end(), [&](std::int64_t s) { return s % width == 0; });
}

std::vector<Knob> RowRegionFamily::knobs() const
{
    return kKnobs;
}

Result<void> RowRegionFamily::check(const nlohmann::json& p) const
{
    const std::string context = "row_region template parameters";
    if (auto r = checkKnobsAndThreads(p, knobs(), context, 32); !r)
        return r;
    const int threads = p["threads"].get<int>();
    const int rows = p["rows_per_block"].get<int>();
    const int v = p["vector_width"].get<int>();
    if (!vectorWidthAllowed(v))
        return makeError(ErrorCode::InvalidArgument,
                         "vector_width " + std::to_string(v) + " not allowed for the row length and dtypes", context);
    const int split = p["split"].get<int>();
    const int parts = p["column_parts"].get<int>();
    if (p["columns"].get<bool>()) {
        if (split != 1 || rows != 1 || v != 1)
            return makeError(ErrorCode::InvalidArgument,
                             "a thread per row (columns) needs split 1, rows_per_block 1 and vector_width 1", context);
        if (threads > 32 && threads / 2 >= m_rows)
            return makeError(ErrorCode::InvalidArgument, "more threads than there are rows", context);
        if (parts > kMaxParts || threads * parts > 1024)
            return makeError(ErrorCode::InvalidArgument,
                             "column_parts must be at most " + std::to_string(kMaxParts) +
                                 " and threads * column_parts at most 1024",
                             context);
        if (parts > 1 && static_cast<std::int64_t>(parts - 1) * columnPartLength(parts) >= m_rowLength)
            return makeError(ErrorCode::InvalidArgument, "more column parts than the row has elements", context);
        return {};
    }
    if (parts != 1)
        return makeError(ErrorCode::InvalidArgument, "column_parts needs a thread per row (columns)", context);
    if (split > 1) {
        const std::int64_t chunk = chunkLength(split, v);
        if (rows != 1 || split > kMaxSplit || m_rows * split > 2147483647LL)
            return makeError(ErrorCode::InvalidArgument,
                             "a split row needs rows_per_block 1, split at most " + std::to_string(kMaxSplit) +
                                 " and fewer than 2^31 blocks",
                             context);
        if (static_cast<std::int64_t>(split - 1) * chunk >= m_rowLength)
            return makeError(ErrorCode::InvalidArgument, "more blocks than the row has vectors", context);
        if (threads > 32 && static_cast<std::int64_t>(threads / 2) * v >= chunk)
            return makeError(ErrorCode::InvalidArgument, "more threads than a chunk of the row has vectors", context);
        return {};
    }
    if (rows > 32 || threads * rows > 1024)
        return makeError(ErrorCode::InvalidArgument,
                         "rows_per_block must be at most 32 and threads * rows_per_block at most 1024", context);
    const std::int64_t items =
        (m_rowLength + static_cast<std::int64_t>(threads) * v - 1) / (static_cast<std::int64_t>(threads) * v);
    if (items * v > kMaxElementsPerThread)
        return makeError(ErrorCode::InvalidArgument,
                         "more than " + std::to_string(kMaxElementsPerThread) + " row elements per thread", context);
    // More threads than a row has vectors leave whole warps idle.
    if (threads > 32 && static_cast<std::int64_t>(threads / 2) * v >= m_rowLength)
        return makeError(ErrorCode::InvalidArgument, "more threads than the row has vectors", context);
    return {};
}

nlohmann::json RowRegionFamily::rootParams() const
{
    if (rowsRunAlongMemory() && m_rows >= kRowsForColumns) {
        // Threads share a row until the rows' threads fill the GPU (or the parts get short).
        int parts = 1;
        while (parts < kMaxParts && m_rows * parts * 2 <= kThreadsToFill &&
               columnPartLength(parts * 2) >= kMinPartLength)
            parts *= 2;
        return {{"threads", 128}, {"rows_per_block", 1}, {"vector_width", 1},
                {"split", 1},     {"columns", true},     {"column_parts", parts}};
    }
    const int v = widestAllowedWidth([this](int w) { return vectorWidthAllowed(w); });
    if (fewLongRows(m_rows, m_rowLength) || m_rowLength > static_cast<std::int64_t>(1024) * kMaxElementsPerThread) {
        // Blocks of 256 threads enough to fill the GPU's thread slots, each chunk at least two vectors
        // per thread.
        int split = 2;
        while (split < kMaxSplit && m_rows * split * 2 * 256 <= kThreadsToFill &&
               chunkLength(split * 2, v) >= 256LL * v * 2)
            split *= 2;
        int threads = 256;
        while (threads > 32 && static_cast<std::int64_t>(threads / 2) * v >= chunkLength(split, v))
            threads /= 2;
        return {{"threads", threads}, {"rows_per_block", 1}, {"vector_width", v},
                {"split", split},     {"columns", false},    {"column_parts", 1}};
    }
    // About four vectors per thread, whole warps, and blocks of at least 256 threads.
    int threads = 32;
    while (threads < 1024 && static_cast<std::int64_t>(threads) * v * 4 < m_rowLength)
        threads *= 2;
    int rows = 1;
    while (threads * rows < 256 && rows < 32)
        rows *= 2;
    return {{"threads", threads}, {"rows_per_block", rows}, {"vector_width", v},
            {"split", 1},         {"columns", false},       {"column_parts", 1}};
}

nlohmann::json RowRegionFamily::withDefaults(const nlohmann::json& params) const
{
    nlohmann::json p = params;
    if (p.is_object()) {
        if (!p.contains("split"))
            p["split"] = 1;
        if (!p.contains("columns"))
            p["columns"] = false;
        if (!p.contains("column_parts"))
            p["column_parts"] = 1;
    }
    return p;
}

std::int64_t RowRegionFamily::columnPartLength(int parts) const
{
    return (m_rowLength + parts - 1) / parts;
}

std::int64_t RowRegionFamily::chunkLength(int split, int width) const
{
    const std::int64_t vectors = (m_rowLength + width - 1) / width;
    return (vectors + split - 1) / split * width;
}

bool RowRegionFamily::cachedBefore(int id, int stage, bool keep) const
{
    const auto i = static_cast<std::size_t>(id);
    return keep && m_cacheSlot[i] >= 0 && m_cachedAt[i] < stage;
}

std::string RowRegionFamily::valueName(int id, int stage, bool keep) const
{
    const auto i = static_cast<std::size_t>(id);
    const PointwiseNode& n = m_expression.nodes()[i];
    if (n.kind == Kind::Position)
        return "ri[" + std::to_string(m_indexSlot[static_cast<std::size_t>(n.operands[0])]) + "]";
    if (m_rowSlot[i] >= 0)
        return "rv[" + std::to_string(m_rowSlot[i]) + "]";
    if (cachedBefore(id, stage, keep))
        return "c[" + std::to_string(m_cacheSlot[i]) + "]";
    return "v" + std::to_string(id);
}

std::string RowRegionFamily::rowValueDeclarations(const std::string& indent) const
{
    return indent + "float rv[NRV];\n" + indent + "(void)rv;\n" +
        (m_indices > 0 ? indent + "int ri[NRI];\n" + indent + "(void)ri;\n" : std::string());
}

std::string RowRegionFamily::reductionResult(int k, const std::string& indent) const
{
    const int node = m_reduces.at(static_cast<std::size_t>(k));
    const int index = m_indexSlot[static_cast<std::size_t>(node)];
    return indent + valueName(node, 0) + " = acc;\n" +
        (index >= 0 ? indent + "ri[" + std::to_string(index) + "] = at;\n" : std::string());
}

std::string RowRegionFamily::storedRowValue(const Operand& o) const
{
    // An index is an int (exact past 2^24, where kfStore's float argument would round it).
    if (m_expression.nodes()[static_cast<std::size_t>(o.node)].kind == Kind::Position)
        return "static_cast<t_" + o.name + ">(" + valueName(o.node, 0) + ")";
    return "kfStore_" + o.name + "(" + valueName(o.node, 0) + ")";
}

std::string RowRegionFamily::elementFunction(const std::string& name, const std::vector<int>& roots, int stage,
                                             bool keep) const
{
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    // Row values, and element values an earlier stage kept in registers, are read, not computed.
    std::vector<bool> leaves = m_perRow;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        leaves[i] = leaves[i] || cachedBefore(static_cast<int>(i), stage, keep);
    const std::vector<bool> needed = m_expression.dependencies(roots, leaves);
    const auto nameOf = [this, stage, keep](int id) { return valueName(id, stage, keep); };
    std::ostringstream s;
    s << "__device__ __forceinline__ void " << name
      << "(const float (&x)[NX], const float (&c)[NC], const float (&rv)[NRV], float (&y)[" << roots.size()
      << "])\n{\n    (void)x;\n    (void)c;\n    (void)rv;\n";
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const PointwiseNode& n = nodes[i];
        if (!needed[i] || leaves[i] || n.kind == Kind::Constant)
            continue;
        if (n.kind == Kind::Input)
            s << "    const float v" << i << " = x[" << m_inputs[static_cast<std::size_t>(n.input)].slot << "];\n";
        else
            s << "    const float v" << i << " = " << m_expression.applyExpression(static_cast<int>(i), nameOf)
              << "; // " << n.op->name << " -> " << n.dtype << "\n";
    }
    for (std::size_t r = 0; r < roots.size(); ++r)
        s << "    y[" << r << "] = " << nameOf(roots[r]) << ";\n";
    s << "}\n";
    return s.str();
}

std::string RowRegionFamily::rowStatements(int stage, const std::string& indent) const
{
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    std::ostringstream s;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const PointwiseNode& n = nodes[i];
        if (m_rowSlot[i] < 0 || m_stage[i] != stage || n.kind != Kind::Apply)
            continue;
        s << indent << valueName(static_cast<int>(i), 0) << " = "
          << m_expression.applyExpression(static_cast<int>(i), [this](int id) { return valueName(id, 0); }) << "; // "
          << n.op->name << " -> " << n.dtype << "\n";
    }
    return s.str();
}

std::string RowRegionFamily::operandDefinitions(int width) const
{
    std::ostringstream s;
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list) {
            if (!o.used)
                continue;
            s << regionOperandTypes(o.name, o.dtype, o.output, !o.perRow && vectorMoves(o, width));
            s << offsetFunction("kfRowOffset_" + o.name, m_outer, o.outerStrides);
            if (!o.perRow)
                s << offsetFunction("kfColOffset_" + o.name, m_rowDims, o.rowStrides);
        }
    return s.str();
}

std::vector<int> RowRegionFamily::elementOutputNodes() const
{
    std::vector<int> nodes;
    for (const Operand& o : m_outputs)
        if (!o.perRow)
            nodes.push_back(o.node);
    return nodes;
}

std::vector<PointwiseReduce> RowRegionFamily::reduceKinds() const
{
    std::vector<PointwiseReduce> kinds;
    for (int r : m_reduces) {
        const PointwiseReduce kind = m_expression.nodes()[static_cast<std::size_t>(r)].reduce;
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
            kinds.push_back(kind);
    }
    return kinds;
}

std::string RowRegionFamily::preamble(const nlohmann::json& params, std::int64_t items, int rowsPerBlock) const
{
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    const int v = params["vector_width"].get<int>();
    const int split = params["split"].get<int>();
    const bool columns = params["columns"].get<bool>();
    const bool keep = split == 1 && !columns; // registers hold the row: values kept between stages
    const int parts = params["column_parts"].get<int>();
    const std::string threadsPerRow =
        parts == 1 ? "a thread per row" : std::to_string(parts) + " threads per row, each a part of it";
    std::ostringstream s;
    s << "// Built-in row region " << m_chain << ": " << m_rows << " rows of " << m_rowLength
      << " elements, fp32 math, " << m_reduces.size() << " reduction(s) over each row, "
      << (columns && columnsHoldRow() ? threadsPerRow + ", its inputs read once into registers.\n"
              : columns               ? threadsPerRow + ", a pass over the row per reduction and one for the outputs.\n"
              : keep ? "one read of each input and one write of each output, the row held in registers.\n"
                     : std::to_string(split) + " blocks per row, one kernel per reduction and one for the outputs.\n")
      << "// Template parameters: " << params.dump() << "\n";
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list)
            s << "//   " << o.name << " " << o.dtype << " "
              << (!o.used        ? "unused"
                      : o.perRow ? "per row"
                                 : "per element")
              << "\n";
    if (m_expression.needsHalf())
        s << "#include <cuda_fp16.h>\n";
    if (m_expression.needsBfloat16())
        s << "#include <cuda_bf16.h>\n";
    s << "constexpr long long ROWS = " << m_rows << "LL;\n"
      << "constexpr int N = " << m_rowLength << ";\n"
      << "constexpr int V = " << v << ";\n"
      << "constexpr int THREADS = " << params["threads"].get<int>() << ";\n"
      << "constexpr int WARPS = THREADS / 32;\n"
      << (keep ? "constexpr int RPB = " + std::to_string(rowsPerBlock) +
                  ";\nconstexpr int ITEMS = " + std::to_string(items) + ";\n"
               : std::string())
      << "constexpr int NX = " << std::max(elementInputs(), 1) << ";\n"
      << "constexpr int NRV = " << std::max(m_rowValues, 1) << ";\n"
      << (m_indices > 0 ? "constexpr int NRI = " + std::to_string(m_indices) + ";\n" : std::string())
      << "constexpr int NC = " << std::max(m_cached, 1) << ";\n"
      << operandDefinitions(v) << m_expression.helpers();
    for (const PointwiseReduce kind : reduceKinds())
        s << row_code::reduceFunctions(kind);
    for (std::size_t k = 0; k < m_reduces.size(); ++k)
        s << elementFunction("kfStage" + std::to_string(k), {nodes[static_cast<std::size_t>(m_reduces[k])].operands[0]},
                             static_cast<int>(k), keep);
    const std::vector<int> outputs = elementOutputNodes();
    if (!outputs.empty())
        s << elementFunction("kfOutputs", outputs, static_cast<int>(m_reduces.size()), keep);
    return s.str();
}

std::string RowRegionFamily::kernelHead(const std::string& name, const std::string& block, bool withOutputs,
                                        const std::string& extra) const
{
    std::ostringstream s;
    s << "\nextern \"C\" __global__ void __launch_bounds__(" << block << ") " << name << "(";
    std::vector<std::string> params;
    for (const Operand& o : m_inputs)
        params.push_back((o.used ? "const t_" + o.name + "*" : std::string("const void*")) + " __restrict__ " + o.name);
    if (withOutputs)
        for (const Operand& o : m_outputs)
            params.push_back("t_" + o.name + "* __restrict__ " + o.name);
    if (!extra.empty())
        params.push_back(extra);
    for (std::size_t k = 0; k < params.size(); ++k)
        s << (k ? ", " : "") << params[k];
    s << ")\n{\n";
    return s.str();
}

std::string RowRegionFamily::rowInputLoads(const std::string& indent) const
{
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    std::ostringstream s;
    for (std::size_t k = 0; k < m_inputs.size(); ++k) {
        const Operand& o = m_inputs[k];
        if (!o.used || !o.perRow)
            continue;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (nodes[i].kind == Kind::Input && nodes[i].input == static_cast<int>(k) && m_rowSlot[i] >= 0)
                s << indent << valueName(static_cast<int>(i), 0) << " = active ? kfLoad_" << o.name << "(" << o.name
                  << "[ro_" << o.name << "]) : 0.0f;\n";
    }
    return s.str();
}

std::string RowRegionFamily::elementInputLoads(const std::string& target, const std::string& inside,
                                               const std::string& indent, int width) const
{
    std::ostringstream s;
    for (const Operand& o : m_inputs) {
        if (!o.used || o.perRow)
            continue;
        const std::string at = target + "[" + std::to_string(o.slot) + "]";
        if (vectorMoves(o, width))
            s << indent << "if (" << inside << ") {\n"
              << indent << "    const Vec_" << o.name << " t = *reinterpret_cast<const Vec_" << o.name << "*>("
              << o.name << " + ro_" << o.name << " + c0);\n"
              << "#pragma unroll\n"
              << indent << "    for (int e = 0; e < V; ++e)\n"
              << indent << "        " << at << "[e] = kfLoad_" << o.name << "(t.v[e]);\n"
              << indent << "} else {\n#pragma unroll\n"
              << indent << "    for (int e = 0; e < V; ++e)\n"
              << indent << "        " << at << "[e] = 0.0f;\n"
              << indent << "}\n";
        else
            s << "#pragma unroll\n"
              << indent << "for (int e = 0; e < V; ++e)\n"
              << indent << "    " << at << "[e] = " << inside << " ? kfLoad_" << o.name << "(" << o.name << "[ro_"
              << o.name << " + kfColOffset_" << o.name << "(c0 + e)]) : 0.0f;\n";
    }
    return s.str();
}

std::string RowRegionFamily::elementOutputStores(const std::string& inputs, const std::string& kept,
                                                 const std::string& indent, int width) const
{
    std::ostringstream s;
    for (const Operand& o : m_outputs)
        if (!o.perRow)
            s << indent << "struct { t_" << o.name << " v[V]; } r_" << o.name << ";\n";
    s << "#pragma unroll\n"
      << indent << "for (int e = 0; e < V; ++e) {\n"
      << indent << "    float x[NX];\n#pragma unroll\n"
      << indent << "    for (int n = 0; n < NX; ++n)\n"
      << indent << "        x[n] = " << inputs << "[n][e];\n"
      << indent << "    float c[NC];\n#pragma unroll\n"
      << indent << "    for (int n = 0; n < NC; ++n)\n"
      << indent << "        c[n] = " << (kept.empty() ? std::string("0.0f") : kept + "[n][e]") << ";\n"
      << indent << "    float y[" << elementOutputNodes().size() << "];\n"
      << indent << "    kfOutputs(x, c, rv, y);\n";
    for (const Operand& o : m_outputs)
        if (!o.perRow)
            s << indent << "    r_" << o.name << ".v[e] = kfStore_" << o.name << "(y[" << o.slot << "]);\n";
    s << indent << "}\n";
    for (const Operand& o : m_outputs) {
        if (o.perRow)
            continue;
        if (vectorMoves(o, width))
            s << indent << "{\n"
              << indent << "    Vec_" << o.name << " t;\n#pragma unroll\n"
              << indent << "    for (int e = 0; e < V; ++e)\n"
              << indent << "        t.v[e] = r_" << o.name << ".v[e];\n"
              << indent << "    *reinterpret_cast<Vec_" << o.name << "*>(" << o.name << " + ro_" << o.name
              << " + kfColOffset_" << o.name << "(c0)) = t;\n"
              << indent << "}\n";
        else
            s << "#pragma unroll\n"
              << indent << "for (int e = 0; e < V; ++e)\n"
              << indent << "    " << o.name << "[ro_" << o.name << " + kfColOffset_" << o.name << "(c0 + e)] = r_"
              << o.name << ".v[e];\n";
    }
    return s.str();
}

Result<Candidate> RowRegionFamily::generate(const nlohmann::json& params) const
{
    if (auto r = check(params); !r)
        return r.error();
    if (params["columns"].get<bool>())
        return generateColumns(params);
    if (params["split"].get<int>() > 1)
        return generateSplit(params);
    const int v = params["vector_width"].get<int>();
    const int threads = params["threads"].get<int>();
    const int rowsPerBlock = params["rows_per_block"].get<int>();
    const std::int64_t items =
        (m_rowLength + static_cast<std::int64_t>(threads) * v - 1) / (static_cast<std::int64_t>(threads) * v);
    const std::vector<PointwiseNode>& nodes = m_expression.nodes();
    const std::string kernel = "kf_row_region";
    std::ostringstream s;
    s << preamble(params, items, rowsPerBlock) << kernelHead(kernel, "THREADS * RPB", true, "")
      << "    __shared__ float scratch[RPB * (WARPS > 1 ? WARPS : 1)];\n"
      << "    (void)scratch;\n"
      << (m_indices > 0 ? "    __shared__ int scratch_at[RPB * (WARPS > 1 ? WARPS : 1)];\n" : "")
      << "    const int lane = threadIdx.x % THREADS;\n"
      << "    for (long long first = static_cast<long long>(blockIdx.x) * RPB; first < ROWS;\n"
      << "         first += static_cast<long long>(gridDim.x) * RPB) {\n"
      << "        const long long row = first + threadIdx.x / THREADS;\n"
      << "        const bool active = row < ROWS;\n"
      << rowValueDeclarations("        ") << "        float xs[ITEMS][NX][V];\n        float cs[ITEMS][NC][V];\n"
      << "        (void)cs;\n";
    // Row inputs, then the element inputs of this thread's vectors.
    for (const Operand& o : m_inputs)
        if (o.used)
            s << "        const long long ro_" << o.name << " = active ? kfRowOffset_" << o.name << "(row) : 0;\n";
    s << rowInputLoads("        ") << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
      << "            const int c0 = (k * THREADS + lane) * V;\n"
      << "            const bool inside = active && c0 < N;\n"
      << elementInputLoads("xs[k]", "inside", "            ", v) << "        }\n"
      << rowStatements(-1, "        ");
    // Each reduction over the row, then the row values it makes known.
    for (std::size_t k = 0; k < m_reduces.size(); ++k) {
        const PointwiseNode& reduce = nodes[static_cast<std::size_t>(m_reduces[k])];
        const PointwiseReduce kind = reduce.reduce;
        // The reduced element value, kept for the stages and outputs after this one.
        const auto operand = static_cast<std::size_t>(reduce.operands[0]);
        const int keep = m_cachedAt[operand] == static_cast<int>(k) ? m_cacheSlot[operand] : -1;
        s << "        {\n"
          << row_code::accumulators(kind, "            ")
          << "#pragma unroll\n            for (int k = 0; k < ITEMS; ++k) {\n"
          << "                const int c0 = (k * THREADS + lane) * V;\n"
          << "                if (!(active && c0 < N))\n                    continue;\n"
          << "#pragma unroll\n                for (int e = 0; e < V; ++e) {\n"
          << "                    float x[NX];\n"
          << "#pragma unroll\n                    for (int n = 0; n < NX; ++n)\n"
          << "                        x[n] = xs[k][n][e];\n"
          << "                    float c[NC];\n"
          << "#pragma unroll\n                    for (int n = 0; n < NC; ++n)\n"
          << "                        c[n] = cs[k][n][e];\n"
          << "                    float y[1];\n"
          << "                    kfStage" << k << "(x, c, rv, y);\n"
          << (keep >= 0 ? "                    cs[k][" + std::to_string(keep) + "][e] = y[0];\n" : std::string())
          << "                    " << row_code::fold(kind, "y[0]", "c0 + e") << "\n"
          << "                }\n            }\n"
          << "            " << row_code::rowCombine(kind) << "\n"
          << reductionResult(static_cast<int>(k), "            ") << "        }\n"
          << rowStatements(static_cast<int>(k), "        ");
    }
    // Element outputs.
    if (!elementOutputNodes().empty()) {
        for (const Operand& o : m_outputs)
            if (!o.perRow)
                s << "        const long long ro_" << o.name << " = active ? kfRowOffset_" << o.name << "(row) : 0;\n";
        s << "#pragma unroll\n        for (int k = 0; k < ITEMS; ++k) {\n"
          << "            const int c0 = (k * THREADS + lane) * V;\n"
          << "            if (!(active && c0 < N))\n                continue;\n"
          << elementOutputStores("xs[k]", "cs[k]", "            ", v) << "        }\n";
    }
    // Row outputs: the first thread of each row writes them.
    for (const Operand& o : m_outputs)
        if (o.perRow)
            s << "        if (active && lane == 0)\n            " << o.name << "[kfRowOffset_" << o.name
              << "(row)] = " << storedRowValue(o) << ";\n";
    s << "    }\n}\n";

    const std::int64_t grid = std::clamp<std::int64_t>((m_rows + rowsPerBlock - 1) / rowsPerBlock, 1, 2147483647LL);
    std::vector<std::string> args;
    for (const std::vector<Operand>* list : {&m_inputs, &m_outputs})
        for (const Operand& o : *list)
            args.push_back(o.token);
    return Candidate{s.str(),
                     {{"launches", nlohmann::json::array({launchJson(kernel, grid, threads * rowsPerBlock, args)})}}};
}

} // namespace kforge::core
