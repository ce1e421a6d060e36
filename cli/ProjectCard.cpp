#include "ProjectCard.h"

#include "project/ProjectStore.h"

namespace kforge::cli {

core::Result<core::OperatorCard> openProjectCard(const std::string& projectDir, const std::string& cardId)
{
    auto project = core::openProject(projectDir);
    if (!project)
        return project.error();
    const core::OperatorCard* card = project->findCard(cardId);
    if (!card)
        return core::makeError(core::ErrorCode::NotFound,
                               "no card with that id (or the prefix is ambiguous) in " + projectDir,
                               "--card " + cardId);
    return *card;
}

} // namespace kforge::cli
