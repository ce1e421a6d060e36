#include "pointwise/DtypePromotion.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace kforge::core {

namespace {

// The dtypes promotion knows, in torch.promote_types' order; a pair promotes to the later one except
// for the two pairs of equal width across kinds (handled in promoteTypes).
constexpr std::array<std::string_view, 10> kOrder = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                                     "int64", "float16", "bfloat16", "float32", "float64"};

int orderOf(const std::string& dtype)
{
    const auto it = std::find(kOrder.begin(), kOrder.end(), dtype);
    return it == kOrder.end() ? -1 : static_cast<int>(it - kOrder.begin());
}

// c10's combine_categories for real dtypes: `lower` (a lower rank's result) wins only with a higher
// category; bool promotes with anything.
std::string combineCategories(const std::string& higher, const std::string& lower)
{
    if (higher.empty())
        return lower;
    if (lower.empty())
        return higher;
    const DtypeCategory h = dtypeCategory(higher), l = dtypeCategory(lower);
    if (h == DtypeCategory::Floating)
        return higher;
    if (h == DtypeCategory::Bool || l == DtypeCategory::Floating)
        return promoteTypes(higher, lower);
    return higher;
}

} // namespace

DtypeCategory dtypeCategory(const std::string& dtype)
{
    if (dtype == "bool")
        return DtypeCategory::Bool;
    if (dtype == "float16" || dtype == "bfloat16" || dtype == "float32" || dtype == "float64")
        return DtypeCategory::Floating;
    if (orderOf(dtype) >= 0)
        return DtypeCategory::Integer;
    return DtypeCategory::Other;
}

std::string promoteTypes(const std::string& a, const std::string& b)
{
    const int ia = orderOf(a), ib = orderOf(b);
    if (ia < 0 || ib < 0)
        return "";
    if (a == b)
        return a;
    const auto pair = [&](std::string_view x, std::string_view y) { return (a == x && b == y) || (a == y && b == x); };
    if (pair("float16", "bfloat16"))
        return "float32";
    if (pair("uint8", "int8"))
        return "int16";
    return std::string(kOrder[static_cast<std::size_t>(std::max(ia, ib))]);
}

std::string resultType(const std::vector<PromotionOperand>& operands)
{
    std::string byRank[3];
    for (const PromotionOperand& operand : operands) {
        if (orderOf(operand.dtype) < 0)
            return "";
        std::string& r = byRank[static_cast<int>(operand.rank)];
        r = r.empty() ? operand.dtype : promoteTypes(r, operand.dtype);
    }
    return combineCategories(byRank[0], combineCategories(byRank[1], byRank[2]));
}

std::string opmathDtype(const std::string& dtype)
{
    return dtype == "float16" || dtype == "bfloat16" ? "float32" : dtype;
}

const char* integerCType(const std::string& dtype)
{
    if (dtype == "int64")
        return "long long";
    if (dtype == "int32")
        return "int";
    if (dtype == "int16")
        return "short";
    if (dtype == "int8")
        return "signed char";
    if (dtype == "uint8")
        return "unsigned char";
    return nullptr;
}

} // namespace kforge::core
