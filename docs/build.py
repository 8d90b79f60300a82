"""Build the documentation site: ``python docs/build.py OUT_DIR [--notebooks DIR]``.

1. The vignettes: with ``--notebooks``, the executed ``<stem>.ipynb`` files that
   ``python -m statcore._vignettes`` (``make demo``) wrote there; without it, this script runs
   the vignettes itself into ``OUT_DIR/vignettes``. A vignette that failed stops the build.
2. The source folder ``OUT_DIR/src``: the pages of ``docs/``, the notebooks under ``vignettes/``
   and one API page per area (:data:`API_AREAS`) under ``api/``, which also shows the area's
   public submodules (:func:`public_submodules`) with the names the area does not export.
3. ``sphinx-build -b html`` into ``OUT_DIR/html``; prints the path of its ``index.html``.

The source is assembled outside ``docs/`` so that a build writes nothing into the checkout.
"""

import argparse
import importlib
import importlib.util
import inspect
import pkgutil
import shutil
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent

#: The API reference, one page per area: (module, heading). Every public sub-package or module of
#: statcore and mlcore is here (tests/test_docs.py checks it).
API_AREAS = [
    ("statcore.results", "Results, summaries and tests"),
    ("statcore.base", "Model bases"),
    ("statcore.formula", "Formulas and designs"),
    ("statcore.exceptions", "Warnings"),
    ("statcore.validation", "Input checks (the public face for mlcore and extensions)"),
    ("statcore.compat", "Optional dependencies and renamed names"),
    ("statcore.progress", "Progress bars"),
    ("statcore.neighbours", "Neighbour search and distances shared by the areas"),
    ("statcore.distributed", "Execution backends and Monte Carlo studies"),
    ("statcore.datasets", "Shipped data sets"),
    ("statcore.quantreg", "Quantile regression"),
    ("statcore.ridge", "Self-distilled ridge"),
    ("statcore.manifold", "Manifold-valued data"),
    ("statcore.shift", "DataShifts"),
    ("statcore.ot", "Entropic optimal transport"),
    ("statcore.quantized", "Quantized data"),
    ("statcore.network", "Networks"),
    ("statcore.cluster", "Clustering"),
    ("statcore.select", "Coreset selection for in-context learning"),
    ("statcore.geometry", "Intrinsic dimension and representational alignment"),
    ("statcore.outliers", "Outlier-detector ensemble selection"),
    ("statcore.theory", "Predict-and-simulate tools of the theory papers"),
    ("mlcore", "mlcore: results and devices"),
    ("mlcore.functional", "mlcore: functional"),
    ("mlcore.losses", "mlcore: losses"),
    ("mlcore.nn", "mlcore: modules"),
    ("mlcore.tta", "mlcore: test-time adaptation"),
    ("mlcore.diffusion", "mlcore: diffusion"),
    ("mlcore.pruning", "mlcore: pruning"),
    ("mlcore.analysis", "mlcore: analysis"),
    ("mlcore.decoding", "mlcore: token intervention"),
    ("mlcore.interp", "mlcore: function vectors and head patching"),
    ("mlcore.merging", "mlcore: task vectors, merges and the overtraining study"),
    ("mlcore.mi", "mlcore: mutual information (InfoAtlas and baselines)"),
    ("mlcore.encoders", "mlcore: dual encoders, the tiny CLIP, splits and metrics"),
    ("mlcore.gzsl", "mlcore: generalised zero-shot post-processing (PUFE)"),
    ("mlcore.weak", "mlcore: CLAPOR and partial-label learning"),
    ("mlcore.fewshot", "mlcore: few-shot fusion (BOIF, Tip-Adapter)"),
    ("mlcore.prompt", "mlcore: prompt tuning (ManiPT, CoOp, KgCoOp)"),
    ("mlcore.federated", "mlcore: federated prototype alignment (FedSPA)"),
    ("mlcore.adapt", "mlcore: hyperbolic and Euclidean flow matching (HFM, FMA)"),
    ("mlcore.transfer", "mlcore: few-shot model transfer across modalities (XTransfer)"),
    ("mlcore.augment", "mlcore: time-series augmentation and few-shot forecasting (ReAugment)"),
    ("mlcore.quant", "mlcore: communication and computation quantisation (CoCoQuant)"),
    ("mlcore.inverse", "mlcore: zero-shot inverse problems (Lottery Prior)"),
    ("mlcore.active", "mlcore: active perception with a frozen detector (Sea²)"),
    ("mlcore.results", "mlcore: training and evaluation results"),
]


def public_names(module_name: str) -> list[str]:
    """``__all__`` of the module, else the public classes and functions defined in it."""
    module = importlib.import_module(module_name)
    # A name that an area re-exports from another area is documented once, in the area that
    # defines it.
    return sorted(
        name
        for name in _candidates(module, module_name)
        if _home_area(getattr(module, name)) in (None, module_name)
    )


def _home_area(obj) -> str | None:
    """The API area whose module path is the longest prefix of where ``obj`` is defined."""
    defined_in = getattr(obj, "__module__", None) or ""
    homes = [m for m, _ in API_AREAS if defined_in == m or defined_in.startswith(m + ".")]
    return max(homes, key=len, default=None)


def public_submodules(module_name: str) -> list[str]:
    """The public modules below the area ``module_name`` that are no area of their own.

    Each is shown on its area's page: its docstring, and the public names it holds that the
    area does not export (:func:`submodule_names`). A module whose name, or one of whose
    packages' names, starts with ``_`` is private.
    """
    module = importlib.import_module(module_name)
    if not hasattr(module, "__path__"):
        return []
    areas = {m for m, _ in API_AREAS}
    found = []
    for info in pkgutil.walk_packages(module.__path__, module_name + "."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        inner = [a for a in areas if a.startswith(module_name + ".")]
        if any(info.name == a or info.name.startswith(a + ".") for a in inner):
            continue  # an area of its own, or below one
        found.append(info.name)
    return sorted(found)


def submodule_names(module_name: str) -> dict[str, list[str]]:
    """``{submodule: names}``: the public names of each public submodule of the area
    ``module_name`` that no area page lists, each name once, in the module that defines it."""
    documented = {
        id(getattr(importlib.import_module(m), n)) for m, _ in API_AREAS for n in public_names(m)
    }
    subs = public_submodules(module_name)
    found = {}
    for sub in subs:
        with warnings.catch_warnings():
            # the old homes of renamed modules (statcore.cluster.spatial, mlcore.pruning.ssm)
            # warn on import; their pages say where the names went
            warnings.simplefilter("ignore", FutureWarning)
            module = importlib.import_module(sub)
        names = []
        for name in _candidates(module, sub):
            obj = getattr(module, name)
            home = getattr(obj, "__module__", None)
            # Imported from another public module of the area: documented there.
            if id(obj) in documented or (home != sub and home in subs):
                continue
            documented.add(id(obj))
            names.append(name)
        found[sub] = sorted(names)
    return found


def _candidates(module, module_name: str) -> list[str]:
    """``__all__``, else the public classes and functions defined in the module; constants
    and dunder names (``__version__``) have no page of their own."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and (inspect.isclass(value) or inspect.isfunction(value))
            and value.__module__ == module_name
        ]
    return [
        name
        for name in names
        if not name.startswith("_")
        and (inspect.isclass(obj := getattr(module, name)) or callable(obj))
    ]


def _autosummary(names: list[str]) -> str:
    lines = "\n".join(f"   {name}" for name in names)
    return f"""
.. autosummary::
   :toctree: generated
   :nosignatures:

{lines}
"""


def _api_page(module_name: str, heading: str) -> str:
    no_index = "\n   :no-index:"
    title = f"{heading} (``{module_name}``)"
    page = f"""{title}
{"=" * len(title)}

.. automodule:: {module_name}
   :no-members:

.. currentmodule:: {module_name}
{_autosummary(public_names(module_name))}"""
    subs = submodule_names(module_name)
    # A submodule named like a function its area exports (``statcore.cluster.resilience``)
    # shows its docstring without a second target of that name.
    exported = set(public_names(module_name))
    if subs:
        page += "\nSubmodules\n----------\n"
    for sub, names in subs.items():
        sub_title = f"``{sub}``"
        page += f"""
{sub_title}
{"~" * len(sub_title)}

.. automodule:: {sub}
   :no-members:{no_index if sub.rpartition(".")[2] in exported else ""}

.. currentmodule:: {sub}
"""
        if names:
            page += _autosummary(names)
    return page


def _api_index() -> str:
    entries = "\n".join(f"   {module.replace('.', '_')}" for module, _ in API_AREAS)
    return f"""API reference
=============

One page per method area, each listing the area's public names; every name has a page
rendered from its numpy-style docstring.

.. toctree::
   :maxdepth: 1

{entries}
"""


def _api_doc(target, name: str) -> str:
    """The document of ``name``'s API page (``target`` the object, or a module when ``name`` is
    empty), else of its area's page."""
    defined_in = target.__name__ if inspect.ismodule(target) else target.__module__
    area = max(
        (m for m, _ in API_AREAS if defined_in == m or defined_in.startswith(m + ".")), key=len
    )
    if name and name in public_names(area):
        return f"/api/generated/{area}.{name}"
    return f"/api/{area.replace('.', '_')}"


def _methods_page() -> str:
    """``methods.md``: the README's method table with API and vignette links (method_index)."""
    spec = importlib.util.spec_from_file_location("method_index", DOCS / "method_index.py")
    method_index = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(method_index)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    vignettes = sorted((REPO / "vignettes").glob("*.py"))
    return method_index.methods_page(readme, vignettes, _api_doc)


def assemble(src: Path, notebooks: list[Path]) -> None:
    """Write the Sphinx source folder ``src`` (replacing it)."""
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(
        DOCS,
        src,
        ignore=shutil.ignore_patterns(
            "build.py", "method_index.py", "README.md", "_build", "__pycache__"
        ),
    )
    (src / "methods.md").write_text(_methods_page(), encoding="utf-8")
    (src / "vignettes").mkdir()
    for notebook in notebooks:
        shutil.copy2(notebook, src / "vignettes" / notebook.name)
    (src / "api").mkdir()
    (src / "api" / "index.rst").write_text(_api_index(), encoding="utf-8")
    for module, heading in API_AREAS:
        page = src / "api" / f"{module.replace('.', '_')}.rst"
        page.write_text(_api_page(module, heading), encoding="utf-8")


def executed_notebooks(folder: Path, sources: list[Path]) -> list[Path]:
    """The executed notebook of every vignette source, checked present and free of errors."""
    import nbformat

    notebooks = []
    for source in sources:
        notebook = folder / f"{source.stem}.ipynb"
        if not notebook.exists():
            raise SystemExit(f"error: no executed notebook {notebook} for {source.name}")
        if notebook.stat().st_mtime < source.stat().st_mtime:
            raise SystemExit(f"error: {notebook} is older than {source}; run make demo again")
        cells = nbformat.read(notebook, as_version=4).cells
        if any(o.output_type == "error" for c in cells for o in c.get("outputs", [])):
            raise SystemExit(f"error: {notebook} holds a failed cell; see make demo")
        notebooks.append(notebook)
    return notebooks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="docs/build.py", description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder for src/ and html/")
    parser.add_argument(
        "--notebooks", type=Path, help="folder of executed vignette notebooks (make demo's output)"
    )
    args = parser.parse_args(argv)
    out = args.out_dir.resolve()
    sources = sorted((REPO / "vignettes").glob("*.py"))
    if args.notebooks is None:
        from statcore._vignettes import build_vignettes

        failed = [
            r.name for r in build_vignettes(REPO / "vignettes", out / "vignettes") if not r.ok
        ]
        if failed:
            print(f"error: vignettes failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        args.notebooks = out / "vignettes"
    assemble(out / "src", executed_notebooks(args.notebooks.resolve(), sources))

    from sphinx.cmd.build import build_main

    # two processes read the pages (CI has two cores; the vignettes ran before, not beside)
    status = build_main(["-b", "html", "-q", "-j", "2", str(out / "src"), str(out / "html")])
    if status == 0:
        print(f"site: {out / 'html' / 'index.html'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
