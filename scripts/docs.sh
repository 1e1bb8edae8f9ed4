#!/usr/bin/env bash
# Builds the documentation site from scratch, with warnings as errors, and checks it in a
# headless browser:
#   scripts/docs.sh [BUILD_DIR]            the site, then the browser check
#   scripts/docs.sh --site [BUILD_DIR]     the site only                     (CTest `docs`)
#   scripts/docs.sh --browser [BUILD_DIR]  the browser check of the site already built in
#                                          BUILD_DIR                 (CTest `docs_browser`)
# BUILD_DIR defaults to build/docs; the site is BUILD_DIR/html.
#
# The site: Doxygen reads the sources (any warning fails), then Sphinx + Breathe + MyST build
# every .rst and .md page (sphinx-build -E -W: a broken anchor, a missing symbol or report
# fails).  It needs no CUDA toolkit and no GPU: what the chapters read from a CUDA build (the
# ptxas reports, kernels.json) is committed in docs/from-build/, which CTest `docs_inputs`
# (scripts/docs_inputs.py) keeps equal to the build's; HM_PTXAS_DIR=BUILD/ptxas reads a
# build's own instead.  Without doxygen, Sphinx, Breathe, furo or MyST it exits 77 (CTest's
# SKIPPED), naming the packages to install.
#
# The browser check (scripts/docs_browser_check.py): every page loaded in headless Chromium
# at 1400 px, with all its images, no code block, diff or table wider than the text column
# and no figure text under 10 px; a screenshot of one chapter is left in
# BUILD_DIR/chapter.png.  Without Chromium it prints "SKIPPED: browser check: …" and the
# install line; then a plain `scripts/docs.sh` still exits 0 (the site is built), and
# `--browser` exits 77.  `--browser` also exits 77 when BUILD_DIR holds no site from a
# `--site` run that succeeded (the `docs` test failed or was skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
site=1 browser=1
case "${1:-}" in
  --site) browser=0; shift ;;
  --browser) site=0; shift ;;
  -*) echo "usage: scripts/docs.sh [--site|--browser] [BUILD_DIR]" >&2; exit 2 ;;
esac
build=${1:-$root/build/docs}
mkdir -p "$build"
build=$(cd "$build" && pwd)
built=$build/site-built  # written last by a --site run that succeeded
cd "$root"

if [ $site = 1 ]; then
  rm -f "$built"
  missing=()
  command -v doxygen >/dev/null || missing+=(doxygen)
  if command -v sphinx-build >/dev/null; then
    sphinx_python=$(head -1 "$(command -v sphinx-build)" | sed 's/^#! *//')
    $sphinx_python -c "import breathe" 2>/dev/null || missing+=(python3-breathe)
    $sphinx_python -c "import furo" 2>/dev/null || missing+=(furo)
    $sphinx_python -c "import myst_parser" 2>/dev/null || missing+=(python3-myst-parser)
  else
    missing+=(python3-sphinx python3-breathe furo python3-myst-parser)
  fi
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
  touch "$built"
  echo "docs: $build/html/index.html"
fi

if [ $browser = 1 ]; then
  if [ ! -e "$built" ]; then
    echo "SKIPPED: browser check: no site built in $build/html (scripts/docs.sh --site builds it)"
    exit 77
  fi
  status=0
  python3 scripts/docs_browser_check.py "$build/html" --screenshot "$build/chapter.png" \
    --screenshot-page chapters/v3_warp_specialized.html || status=$?
  # Without Chromium only the browser check is skipped: a full run has built the site.
  if [ $status = 77 ] && [ $site = 1 ]; then
    status=0
  fi
  exit $status
fi
