#include "CardsTable.h"
#include "Commands.h"
#include "util/ArgParser.h"

#include "project/ProjectStore.h"

#include <iostream>

namespace kforge::cli {

int runCardsCommand(const std::vector<std::string>& args)
{
    core::ArgParser parser;
    parser.flag("--json");
    if (auto error = parser.parse(args))
        return fail("cards: " + *error + " (see 'kforge cards --help')", 2);
    if (parser.positionals().size() != 1)
        return fail("cards: expected exactly one PROJECT_DIR (see 'kforge cards --help')", 2);
    auto project = core::openProject(parser.positionals().front());
    if (!project)
        return fail(project.error().toString());
    if (parser.has("--json"))
        std::cout << cardsJson(project.value()).dump(2) << "\n";
    else
        std::cout << formatCardsTable(project.value());
    return 0;
}

} // namespace kforge::cli
