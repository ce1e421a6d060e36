// Test helper for the host emulation of built-in kernels (emulate_builtin_families.py): writes the
// built-in proposer's root candidate for one card and up to N-1 of its untried neighbours.
//
// Usage: kforge_kernel_dump CARD.json OUT_DIR N
//   CARD.json: one entry of a project's cards.json. Writes OUT_DIR/K.cu and OUT_DIR/K.json (the
//   launch plan) for K = 0 .. count-1 and prints count. Exit 3 with the reason on stdout when the
//   proposer does not cover the card, 1 on any other error.

#include "builtin_proposer/BuiltinProposer.h"
#include "model/SearchTree.h"
#include "project/ProjectJson.h"

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using namespace kforge::core;

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::cerr << "usage: kforge_kernel_dump CARD.json OUT_DIR N\n";
        return 1;
    }
    std::ifstream in(argv[1]);
    std::stringstream text;
    text << in.rdbuf();
    auto card = cardFromJson(nlohmann::json::parse(text.str(), nullptr, false), argv[1]);
    if (!card) {
        std::cerr << card.error().toString() << "\n";
        return 1;
    }
    if (auto supported = BuiltinProposer::supports(card.value()); !supported) {
        std::cout << "unsupported: " << supported.error().message << "\n";
        return 3;
    }
    BuiltinProposer proposer(card.value());
    const SearchTree tree(card->id, 1);
    const std::atomic<bool> stop{false};
    auto root = proposer.proposeRoot(tree, stop);
    if (!root) {
        std::cerr << root.error().toString() << "\n";
        return 1;
    }
    std::vector<Candidate> candidates = {root->candidate};
    for (Candidate& next : proposer.likelyNext(tree, root.value(), static_cast<std::size_t>(std::stoi(argv[3])) - 1))
        candidates.push_back(std::move(next));
    const std::string dir = argv[2];
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        std::ofstream(dir + "/" + std::to_string(k) + ".cu") << candidates[k].source;
        std::ofstream(dir + "/" + std::to_string(k) + ".json") << candidates[k].launchPlan.dump();
    }
    std::cout << candidates.size() << "\n";
    return 0;
}
