"""Sphinx configuration of the statcore documentation site (built by ``docs/build.py``).

Why Sphinx: the docstrings are numpy style, and numpydoc renders them as scipy, statsmodels and
pandas render theirs; myst-nb renders the executed vignette notebooks, outputs and figures
included, and turns their ``$...$`` math into MathJax; and sphinx-mathjax-offline ships MathJax
inside the site, so math renders with no network. mkdocs-material with mkdocstrings would need a
second docstring dialect and a CDN or a hand-copied MathJax.

``docs/build.py`` assembles the source folder this file is read from: the pages of ``docs/``, the
executed vignette notebooks under ``vignettes/`` and one API page per area under ``api/``.
"""

import statcore

project = "statcore"
author = "statcore developers"
copyright = "2026, statcore developers"  # noqa: A001 (Sphinx's name)
release = version = statcore.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    # MathJax 3 copied into _static/mathjax, and mathjax_path pointed at it: no CDN.
    "sphinx-mathjax-offline",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]

# API reference: one stub page per public name, each class with its methods once.
autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "groupwise"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

# Vignettes: the notebooks arrive executed by statcore._vignettes (make demo); never run again.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

html_theme = "pydata_sphinx_theme"
html_title = f"statcore {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
html_copy_source = False
