#!/usr/bin/env bash
# Installs what Kernel Forge needs on a fresh Debian 12 machine, idempotently, and writes
# .deps/env.sh with the settings the build uses (KFORGE_PYTHON, KFORGE_GUI).
#
# - Debian 12: missing Debian packages are installed with apt-get (as root, or through sudo).
# - Elsewhere (e.g. an Ubuntu GPU server without package access) nothing is installed: what is
#   there is used, and a missing Qt turns the GUI off instead of failing.
# - LibTorch comes from PyPI's torch==2.11.0: python3's own torch is used when it is 2.11.x;
#   otherwise a virtual environment (KFORGE_VENV, default ~/.local/share/kforge/venv) is made and
#   torch is installed into it from wheels cached in the project's .deps/wheels (git-ignored).
#
# Environment overrides: KFORGE_PYTHON (use this interpreter), KFORGE_GUI (ON/OFF), KFORGE_VENV.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"
mkdir -p "$deps"
say() { echo "bootstrap: $*" >&2; }

torch_version_of() { # prints the torch version importable by interpreter $1, or nothing
    "$1" -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -n 1 || true
}

is_debian() { [ -r /etc/os-release ] && . /etc/os-release && [ "${ID:-}" = debian ]; }

debian_packages=(
    build-essential cmake ninja-build ccache git pkg-config
    python3 python3-venv python3-pip
    qt6-base-dev qt6-charts-dev libqt6opengl6-dev libxkbcommon-dev libqscintilla2-qt6-dev libgl-dev
    libcurl4-openssl-dev nlohmann-json3-dev libgtest-dev
    clang libclang-rt-14-dev # the fuzz tests (tests/fuzz): clang with libFuzzer and the sanitizers
    clang-format # the style check (tools/check_format.sh, ctest format_check)
)

install_debian_packages() {
    local missing=()
    for p in "${debian_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && { say "Debian packages present"; return; }
    say "installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

choose_python() {
    if [ -n "${KFORGE_PYTHON:-}" ]; then
        case "$(torch_version_of "$KFORGE_PYTHON")" in
            2.11.*) echo "$KFORGE_PYTHON"; return ;;
            *) say "KFORGE_PYTHON=$KFORGE_PYTHON has no torch 2.11"; exit 1 ;;
        esac
    fi
    local system_python
    system_python="$(command -v python3 || true)"
    if [ -n "$system_python" ]; then
        case "$(torch_version_of "$system_python")" in
            2.11.*) echo "$system_python"; return ;;
        esac
    fi
    local venv="${KFORGE_VENV:-$HOME/.local/share/kforge/venv}"
    if [ -x "$venv/bin/python" ]; then
        case "$(torch_version_of "$venv/bin/python")" in
            2.11.*) echo "$venv/bin/python"; return ;;
        esac
    fi
    [ -n "$system_python" ] || { say "python3 is missing"; exit 1; }
    say "installing torch 2.11.0 into $venv (wheels cached in $deps/wheels)"
    "$system_python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >&2
    mkdir -p "$deps/wheels"
    "$venv/bin/python" -m pip download -q -d "$deps/wheels" torch==2.11.0 numpy >&2
    "$venv/bin/python" -m pip install -q --no-index --find-links "$deps/wheels" torch==2.11.0 numpy >&2
    echo "$venv/bin/python"
}

qt_present() {
    [ -f /usr/lib/x86_64-linux-gnu/cmake/Qt6Widgets/Qt6WidgetsConfig.cmake ] ||
        [ -f /usr/lib/cmake/Qt6Widgets/Qt6WidgetsConfig.cmake ] ||
        [ -n "${Qt6_DIR:-}" ]
}

if is_debian && command -v apt-get >/dev/null; then
    install_debian_packages
else
    say "not Debian: using the tools already installed"
fi

# The CUDA 13 toolkit (NVRTC, CUPTI, CUDA headers) is not a Debian package: NVIDIA's installer puts
# it at /usr/local/cuda (or CUDAToolkit_ROOT). Say so clearly when it is missing.
cuda_root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
if [ ! -f "$cuda_root/include/nvrtc.h" ]; then
    say "the CUDA 13 toolkit was not found at $cuda_root (need include/nvrtc.h): install NVIDIA's CUDA 13.0 toolkit there or set CUDAToolkit_ROOT"
    exit 1
fi

python="$(choose_python)"
say "LibTorch from $python (torch $(torch_version_of "$python"))"

gui="${KFORGE_GUI:-}"
if [ -z "$gui" ]; then
    if qt_present; then gui=ON; else gui=OFF; say "Qt 6 not found: building without the GUI"; fi
fi

cat > "$deps/env.sh.tmp" <<ENV
# Written by packaging/bootstrap.sh
KFORGE_PYTHON='$python'
KFORGE_GUI='$gui'
ENV
mv "$deps/env.sh.tmp" "$deps/env.sh"
