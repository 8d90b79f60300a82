"""Sphinx configuration of the statcore documentation site (built by ``docs/build.py``).

Why Sphinx: the docstrings are numpy style, and numpydoc renders them as scipy, statsmodels and
pandas render theirs; myst-nb renders the executed vignette notebooks, outputs and figures
included, and turns their ``$...$`` math into MathJax; and sphinx-mathjax-offline's copy of
MathJax is shipped inside the site, so math renders with no network. mkdocs-material with
mkdocstrings would need a second docstring dialect and a CDN or a hand-copied MathJax.

``docs/build.py`` assembles the source folder this file is read from: the pages of ``docs/``, the
executed vignette notebooks under ``vignettes/`` and one API page per area under ``api/``.
"""

import importlib.util
import sys
from pathlib import Path

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
]

# MathJax 3 from the sphinx-mathjax-offline package, copied into _static/mathjax as a static
# folder rather than by loading that package as an extension: it does not declare itself
# parallel-safe, and docs/build.py reads the pages on both cores (-j 2).
_MATHJAX = importlib.util.find_spec("sphinx-mathjax-offline").submodule_search_locations[0]
html_static_path = [str(Path(_MATHJAX) / "static")]
mathjax_path = "mathjax/tex-chtml.js"

templates_path = ["_templates"]
exclude_patterns = ["_build", "**/.ipynb_checkpoints"]

# API reference: one stub page per public name, each class with its methods once.
autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "groupwise"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
# Parameter types stay the text their docstrings write ("array_like, optional", "ndarray of
# shape (n, p)"): with no network there are no intersphinx inventories for numpy, pandas,
# scipy, sklearn or torch, so a type word could only become a link that resolves nowhere.
numpydoc_xref_param_type = False

# Every cross-reference must resolve (docs/build.py's API pages are built with no warning).
nitpicky = True
# External classes and functions that the pages name but this offline site cannot link (no
# intersphinx downloads): the bases autodoc shows (``Bases: torch.nn.Module``) and the
# standard-library and third-party objects docstrings cite by role.
nitpick_ignore_regex = [(r"py:.*", r"(torch|scipy|gymnasium|concurrent\.futures)\..*")]
# Docstrings that methods without one of their own inherit from torch.nn.Module (forward, train,
# load_state_dict) and gymnasium.Env (render), whose references name those libraries' objects.
nitpick_ignore = [
    ("py:class", "Module"),
    ("py:class", "Dropout"),
    ("py:class", "BatchNorm"),
    ("py:meth", "state_dict"),
    ("py:attr", "render_mode"),
    ("py:attr", "metadata"),
]

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


def _fidelity_out(app, what, name, obj, options, lines):
    """Before numpydoc: take a docstring's ``Fidelity`` section (how closely an implementation
    follows its paper) out of ``lines``, which numpydoc would drop as an unknown section."""
    for start in range(len(lines) - 1):
        if lines[start].strip() == "Fidelity" and set(lines[start + 1].strip()) == {"-"}:
            break
    else:
        return
    end = start + 2
    while end < len(lines) and not (
        end + 1 < len(lines)
        and lines[end].strip()
        and set(lines[end + 1].strip()) == {"-"}
        and len(lines[end + 1].strip()) >= len(lines[end].strip())
    ):
        end += 1
    body = lines[start + 2 : end]
    del lines[start:end]
    _FIDELITY[(what, name)] = body


def _fidelity_in(app, what, name, obj, options, lines):
    """After numpydoc: the ``Fidelity`` section back, as a rubric at the docstring's end."""
    body = _FIDELITY.pop((what, name), None)
    if body is not None:
        lines.extend(["", ".. rubric:: Fidelity", "", *body, ""])


_FIDELITY = {}


def _short_reference(app, env, node, contnode):
    """A Python reference by a bare or partial name (``:func:`selective_scan``` in a submodule
    whose area exports it) that the usual lookup misses: the one documented object whose full
    name ends with it, preferring the one nearest the referring module; unresolved otherwise."""
    if node.get("refdomain") != "py" or node.get("refspecific"):
        return None
    target = node["reftarget"]
    if any(part.startswith("_") for part in target.split(".")[:-1]):
        target = target.rpartition(".")[2]  # a private module's name, exported publicly
    domain = env.get_domain("py")
    found = domain.find_obj(env, "", "", target, node["reftype"], searchmode=1)
    # A re-exported name is also entered under its canonical path, as an alias of one page.
    found = [match for match in found if not match[1].aliased] or found
    if not found:
        return None
    here = (node.get("py:module") or "").split(".")

    def shared(name):  # how many leading module parts the match shares with the referrer
        count = 0
        for mine, theirs in zip(name.split("."), here, strict=False):
            if mine != theirs:
                break
            count += 1
        return count

    ranked = sorted(found, key=lambda match: -shared(match[0]))
    if len(ranked) > 1 and shared(ranked[0][0]) == shared(ranked[1][0]):
        return None  # ambiguous: leave it to nitpicky to report
    node["refspecific"] = True
    node["reftarget"] = ranked[0][0]
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], ranked[0][0], node, contnode
    )


def _private(cls) -> bool:
    """A statcore or mlcore class with no page: private by its name, or defined in a private
    module and in the ``__all__`` of no public one (``mlcore._studies.SeedStudy``)."""
    if cls.__name__.startswith("_"):
        return True
    top, *parts = cls.__module__.split(".")
    if top not in ("statcore", "mlcore") or not any(p.startswith("_") for p in parts):
        return False
    return not any(
        getattr(module, cls.__name__, None) is cls
        and cls.__name__ in getattr(module, "__all__", ())
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == top and not any(p.startswith("_") for p in name.split("."))
    )


def _public_bases(app, name, obj, options, bases):
    """``Bases:`` of a class page: a private base (``_FlowBase``) has no page, so show the
    public classes it derives from instead."""
    shown = []

    def add(base):
        if _private(base):
            for parent in base.__bases__:
                add(parent)
        elif base not in shown:
            shown.append(base)

    for base in bases:
        add(base)
    bases[:] = shown or [object]


def setup(app):
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _short_reference)
    # numpydoc's own handler runs at the default priority, 500.
    app.connect("autodoc-process-docstring", _fidelity_out, priority=400)
    app.connect("autodoc-process-docstring", _fidelity_in, priority=600)
