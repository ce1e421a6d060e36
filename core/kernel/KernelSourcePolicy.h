#pragma once
// What a candidate's source may contain before NVRTC sees it (docs/kernel-contract.md, "What a
// kernel may do"). NVRTC opens any file an #include names, so a source that could make it read
// the host is refused here, with a reason, before any compile.

#include "kernel/KernelSource.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kforge::core {

/// Why a source is refused and where.
struct SourcePolicyViolation {
    int line = 0;       // 1-based physical line; 0 when the source as a whole is refused (size, encoding)
    int column = 0;     // 1-based byte column on that line; 0 when the line is 0
    std::string reason; // one line, e.g. `#include "/proc/self/environ" is not an allowed header (...)`

    bool operator==(const SourcePolicyViolation&) const = default;
};

/// The first rule `source` breaks, or nullopt when NVRTC may compile it. Pure; any thread; linear in
/// the size of the source (a source above kMaxKernelSourceBytes is refused before it is scanned).
///
/// Refused, in this order of checking:
///  - more than kMaxKernelSourceBytes; a NUL byte; invalid UTF-8 (overlong forms, surrogates and
///    code points above U+10FFFF included); a carriage return not followed by a line feed (NVRTC
///    reads it as a space, so `#<CR>include` is a directive); a trigraph (`??=` and the other eight);
///  - outside comments and string/character literals: a character outside the basic source set
///    (`$`, `@`, a backtick, a backslash that does not end a line, any non-ASCII character), a raw
///    string literal (`R"(...)"`: its body would be read as code here), an unterminated block
///    comment; token pasting (`##`, `%:%:`: it can assemble `_Pragma` or `__has_include`);
///    the identifiers `_Pragma`, `__pragma`, and any starting with `__has_include` or `__has_embed`
///    (they run pragmas or probe the host's files); `<<<` (a device-side kernel launch);
///  - directives other than #define, #undef, #if, #ifdef, #ifndef, #elif, #elifdef, #elifndef,
///    #else, #endif, #error, #warning, #include, #pragma and the null directive (so #include_next,
///    #import, #line, `# 33 "file"`, #embed, #ident, ... are refused); a #pragma other than
///    `once`, `nounroll` and `unroll` with an optional count (no string in it);
///  - an #include whose header is not an exact literal `<name>` or `"name"` of an allowed header
///    (isAllowedKernelHeader), with nothing after it on its line; an #include after the first
///    #define or #undef (a candidate's macros could otherwise change what a CUDA header includes:
///    some reachable CCCL headers include a header named by a macro).
/// Directives are found as the preprocessor finds them: after backslash-newline splices, with
/// comments (also between `#` and the directive name, and spanning lines) read as spaces, with
/// `%:` read as `#`, and in every conditional group (nothing is evaluated, so a directive in an
/// `#if 0` group is checked too). "\r\n" ends a line like "\n".
/// Compile outcomes are cached by NvrtcCompiler::cacheKey, which does not hash these rules: a change
/// that refuses more must bump the format tag there, or a cached success would still be served.
std::optional<SourcePolicyViolation> checkKernelSource(std::string_view source);

/// Whether `name` (the text between the `<>` or `""` of an #include) is an allowed header: one of
/// cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, cooperative_groups.h, mma.h, cuda_pipeline.h,
/// cuda_awbarrier.h, cuda_runtime.h, device_launch_parameters.h, math_constants.h, or a path under
/// cooperative_groups/, cub/, cuda/ (libcu++, cuda/std/...) or nv/. Only [A-Za-z0-9_./-], no leading
/// `/`, and no empty, `.` or `..` path component.
bool isAllowedKernelHeader(std::string_view name);

/// The allowed headers as the refusal reason lists them.
const char* allowedKernelHeadersText();

/// The outcome compile() returns for a refused source: ok=false, no cubin or PTX, a log line in
/// NVRTC's format (`<sourceName>(<line>): error: refused before compiling: <reason>`) and one Error
/// diagnostic {sourceName, line, column, "refused before compiling: <reason>"}, so every caller
/// treats it as a compile failure with that reason.
CompiledKernel refusedCompile(const SourcePolicyViolation& violation, const std::string& sourceName);

} // namespace kforge::core
