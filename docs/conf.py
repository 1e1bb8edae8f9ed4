"""Sphinx configuration: the chapters, the intro, and the API reference through Breathe.

scripts/docs.sh runs Doxygen first (XML into $HM_DOCS_BUILD/doxygen/xml) and then
sphinx-build -E -W, so a broken anchor, a missing symbol or a missing resource report
fails the build.
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.environ.get("HM_DOCS_BUILD", os.path.join(ROOT, "build", "docs"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "Hopper matmul, step by step"
author = "the Hopper matmul authors"
copyright = "2026, " + author
extensions = ["breathe", "myst_parser", "hm_docs", "hm_compare", "hm_numbers"]
# docs/notes/*.md are pages too (MyST); the figure scripts and the build inputs are not.
exclude_patterns = ["_build", "figures/*.py", "from-build", "markdown"]
templates_path = []
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"

breathe_projects = {"hopper-matmul": os.path.join(BUILD, "doxygen", "xml")}
breathe_default_project = "hopper-matmul"
breathe_default_members = ("members",)
breathe_show_include = False

# Inputs of the hm-* directives (docs/_ext/hm_docs.py).
hm_root = ROOT
# The ptxas reports and kernels.json (beside ptxas/) are the committed copy of a CUDA
# build's, so that the site builds without nvcc; scripts/docs_inputs.py refreshes and checks
# it.  HM_PTXAS_DIR=BUILD/ptxas reads a build's own instead.
hm_ptxas_dir = os.environ.get("HM_PTXAS_DIR", os.path.join(ROOT, "docs", "from-build", "ptxas"))
hm_results = os.path.join(ROOT, "results", "h200", "bench.json")
hm_ladder = os.path.join(ROOT, "results", "h200", "ladder_bf16.json")

html_theme = "furo"
html_title = project
html_static_path = ["_static"]
html_js_files = ["image-check.js"]
# Code, diff and table widths for 100-column sources (scripts/docs_browser_check.py checks
# at 1400 px that nothing is cut).
html_css_files = ["hm.css"]
html_last_updated_fmt = None
html_show_sourcelink = False
highlight_language = "none"
