#!/usr/bin/env bash
# Builds the documentation site from scratch, with warnings as errors, and checks it in a
# headless browser:
#   scripts/docs.sh [BUILD_DIR]          (default build/docs; the site is BUILD_DIR/html)
# Doxygen reads the sources (any warning fails), Sphinx + Breathe build the site
# (sphinx-build -E -W: a broken anchor, a missing symbol or report fails), then every page
# is loaded in headless Chromium and must show all its images; a screenshot of one chapter
# is left in BUILD_DIR/chapter.png.  The chapters read the ptxas reports of a CMake build
# (build/release/ptxas, or $HM_PTXAS_DIR).  Exits 77 (CTest's SKIPPED) when a tool is
# missing, naming the packages that provide it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/docs}
mkdir -p "$build"
build=$(cd "$build" && pwd)
cd "$root"

missing=()
command -v doxygen >/dev/null || missing+=(doxygen)
if command -v sphinx-build >/dev/null; then
  sphinx_python=$(head -1 "$(command -v sphinx-build)" | sed 's/^#! *//')
  $sphinx_python -c "import breathe" 2>/dev/null || missing+=(python3-breathe)
  $sphinx_python -c "import furo" 2>/dev/null || missing+=(furo)
else
  missing+=(python3-sphinx python3-breathe furo)
fi
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIPPED: the docs need ${missing[*]}: sudo apt-get install -y ${missing[*]}"
  exit 77
fi

export HM_DOCS_BUILD=$build
# Every version folder, for docs/Doxyfile's INPUT.
HM_VERSION_DIRS=$(for f in v*_*/matmul.cu; do dirname "$f"; done | sort -V | tr '\n' ' ')
export HM_VERSION_DIRS
rm -rf "$build/doxygen" "$build/html" "$build/doxygen-warnings.txt"
doxygen docs/Doxyfile
if [ -s "$build/doxygen-warnings.txt" ]; then
  echo "Doxygen warnings:"
  cat "$build/doxygen-warnings.txt"
  exit 1
fi
sphinx-build -E -W --keep-going -q -b html docs "$build/html"
python3 scripts/docs_browser_check.py "$build/html" --screenshot "$build/chapter.png" \
  --screenshot-page chapters/v3_warp_specialized.html
echo "docs: $build/html/index.html"
