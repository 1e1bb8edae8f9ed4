#!/usr/bin/env bash
# The site as GitHub-flavoured Markdown, committed in docs/markdown/, so that every chapter
# reads complete on a code host and offline (the README links to it): excerpts, diffs,
# resource and measured tables, figures.
#   scripts/docs_markdown.sh [--check] [BUILD_DIR]   build it and compare it with docs/markdown/
#                                                    (the default; CTest `docs_markdown`)
#   scripts/docs_markdown.sh --update [BUILD_DIR]    build it and replace docs/markdown/ with it
# --check then also runs scripts/markdown_links.py: every relative link, image and anchor of
# the README and of docs/markdown/ must resolve, as a code host would follow it.
# BUILD_DIR defaults to build/docs-markdown; the rendering is built in BUILD_DIR/markdown by
# Sphinx's `markdown` builder (docs/_ext/hm_markdown.py), with warnings as errors.  It needs
# neither Doxygen nor a CUDA build: it reads the committed inputs (the ptxas reports and
# kernels.json in docs/from-build/, the recorded runs in results/), and $HM_PTXAS_DIR is
# ignored, so that the output is the same on every machine.  Without Sphinx, Breathe or MyST
# it exits 77 (CTest's SKIPPED), naming the packages to install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=check
case "${1:-}" in
  --check) shift ;;
  --update) mode=update; shift ;;
  -*) echo "usage: scripts/docs_markdown.sh [--check|--update] [BUILD_DIR]" >&2; exit 2 ;;
esac
build=${1:-$root/build/docs-markdown}
mkdir -p "$build"
build=$(cd "$build" && pwd)
cd "$root"

missing=()
if command -v sphinx-build >/dev/null; then
  sphinx_python=$(head -1 "$(command -v sphinx-build)" | sed 's/^#! *//')
  $sphinx_python -c "import breathe" 2>/dev/null || missing+=(python3-breathe)
  $sphinx_python -c "import myst_parser" 2>/dev/null || missing+=(python3-myst-parser)
else
  missing+=(python3-sphinx python3-breathe python3-myst-parser)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "SKIPPED: the Markdown rendering needs ${missing[*]}: sudo apt-get install -y ${missing[*]}"
  exit 77
fi

unset HM_PTXAS_DIR
export HM_DOCS_BUILD=$build
out=$build/markdown
committed=docs/markdown
rm -rf "$out" "$build/doctrees"
sphinx-build -E -W --keep-going -q -b markdown -d "$build/doctrees" docs "$out"
count=$(find "$out" -type f | wc -l)

if [ $mode = update ]; then
  rm -rf "$committed"
  cp -R "$out" "$committed"
  echo "docs_markdown: wrote $count files to $committed/"
  exit 0
fi

list() { (cd "$1" 2>/dev/null && find . -type f | sed 's|^\./||' | LC_ALL=C sort); }
stale=()
while IFS= read -r f; do
  if [ ! -f "$committed/$f" ]; then
    stale+=("$committed/$f (missing: the build writes it)")
  elif [ ! -f "$out/$f" ]; then
    stale+=("$committed/$f (no page generates it any more)")
  elif ! cmp -s "$out/$f" "$committed/$f"; then
    stale+=("$committed/$f (differs from what the build writes)")
  fi
done < <( (list "$out"; list "$committed") | LC_ALL=C sort -u)

if [ ${#stale[@]} -gt 0 ]; then
  echo "docs_markdown: $committed/ is out of date with the docs' sources:"
  printf '  %s\n' "${stale[@]}"
  diff -ruN "$committed" "$out" | head -60 || true
  echo "refresh it: scripts/docs_markdown.sh --update   (then commit $committed/)"
  exit 1
fi
echo "docs_markdown: $committed/ is up to date ($count files)"
# And what a code host shows of it resolves: every relative link, image and anchor of the
# README and of docs/markdown/ (the parser is MyST's, so it is here whenever Sphinx is).
$sphinx_python scripts/markdown_links.py .
