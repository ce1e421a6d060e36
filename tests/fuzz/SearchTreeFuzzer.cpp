// libFuzzer harness of the search tree reader (TreeStore::load: tree.json as `kforge optimize
// --resume`, `kforge tree`, export and the desktop app read it).
//
// Input: the bytes of tree.json.

#include "FuzzSupport.h"

#include "model/SearchTreeJson.h"
#include "search/TreeStore.h"

#include <cstdint>

using namespace kforge::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto file = kforge::fuzz::scratchDir() / "tree.json";
    kforge::fuzz::writeFile(file, input);
    auto tree = TreeStore(file).load();
    if (tree) {
        // Whatever the reader accepts, it reads back after writing it.
        auto again = searchTreeFromJson(toJson(tree.value()), "again");
        if (!again)
            __builtin_trap();
    } else if (tree.error().toString().find('\n') != std::string::npos) {
        __builtin_trap(); // every refusal is one line
    }
    return 0;
}
