"""The house plan both packages keep (DESIGN.md §1 and §5), read from the source itself.

Each test walks every module of statcore and mlcore, so a new file that breaks a rule fails here
without anyone remembering to add a case.
"""

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("statcore", "mlcore")
MAX_LINES = 1000


def _source_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(name: str) -> bool:
    return (ROOT / Path(*name.split(".")) / "__init__.py").is_file()


def _is_module(name: str) -> bool:
    path = ROOT / Path(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(path: Path):
    """Every project module that ``path`` imports, at any depth of the file (lazy imports too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    own = _module_name(path)
    package = own if _is_package(own) else own.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield submodule if _is_module(submodule) else base


def _project_graph():
    graph = {}
    for path in _source_files():
        name = _module_name(path)
        graph[name] = {
            target
            for target in _imports(path)
            if target.split(".")[0] in PACKAGES and _is_module(target) and target != name
        }
    return graph


def _strongly_connected(graph):
    """Tarjan's algorithm, iterative (the graph has a few hundred nodes)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def test_the_cycle_finder_finds_a_planted_cycle():
    # a control: the test below would pass vacuously if the finder never reported anything
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in _strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


def test_no_import_cycle_between_project_modules():
    """A parent package's ``__init__`` importing its children is a tree, not a circle."""
    graph = _project_graph()
    for name, targets in graph.items():
        # a module importing its own package's __init__ (or an ancestor's) is the ordinary
        # ``from package import sibling`` route of Python and runs after the parent has loaded
        graph[name] = {t for t in targets if not name.startswith(t + ".")}
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles}"


def _private_statcore_module(target: str) -> bool:
    return target.startswith("statcore") and any(
        part.startswith("_") for part in target.split(".")[1:]
    )


def test_mlcore_reaches_statcore_only_through_public_modules():
    offenders = {}
    for path in sorted((ROOT / "mlcore").rglob("*.py")):
        private = sorted({t for t in _imports(path) if _private_statcore_module(t)})
        if private:
            offenders[str(path.relative_to(ROOT))] = private
    assert not offenders, offenders


@pytest.mark.parametrize("path", list(_source_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_source_file_over_a_thousand_lines(path):
    n_lines = len(path.read_text().splitlines())
    assert n_lines <= MAX_LINES, f"{n_lines} lines: split it by job"


NOTE_CITATIONS = re.compile(
    r"method notes|the notes'|(?<![\w.])notes \(§|specs?/|spec file|shared/", re.IGNORECASE
)


def test_docstrings_cite_papers_not_notes_outside_the_repository():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _source_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if NOTE_CITATIONS.search(line)
    ]
    assert not offenders, "\n".join(map(str, offenders))


def _public_modules():
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            if any(part.startswith("_") for part in info.name.split(".")):
                continue
            yield importlib.import_module(info.name)


def _public_classes_with_fit():
    import torch

    seen = {}
    for module in _public_modules():
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and not name.startswith("_")
                and obj.__module__.split(".")[0] in PACKAGES
                and not any(p.startswith("_") for p in obj.__module__.split("."))
                and callable(getattr(obj, "fit", None))
                and not _deprecated_module_fit(obj, torch)
            ):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return seen


def _deprecated_module_fit(cls, torch) -> bool:
    """A torch module may keep a ``fit`` for one release only, as a shim that warns and hands
    over to the estimator that now wraps the module."""
    return issubclass(cls, torch.nn.Module) and "FutureWarning" in inspect.getsource(cls.fit)


def test_every_public_class_with_a_fit_is_an_estimator():
    from statcore.base import Estimator

    classes = _public_classes_with_fit()
    # a control: the walk must see the estimators everyone knows are there
    assert "statcore.quantreg.model.QuantReg" in classes
    off_base = sorted(name for name, cls in classes.items() if not issubclass(cls, Estimator))
    assert not off_base, "\n".join(off_base)


def _fit_functions():
    for path in _source_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "fit":
                        yield f"{path.relative_to(ROOT)}::{node.name}", item


def test_no_fit_returns_self():
    offenders = [
        where
        for where, fit in _fit_functions()
        for node in ast.walk(fit)
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ]
    assert not offenders, "\n".join(map(str, offenders))


def test_fit_options_are_recorded_by_the_base_not_by_hand():
    offenders = [
        where
        for where, fit in _fit_functions()
        for node in ast.walk(fit)
        if isinstance(node, ast.keyword | ast.Attribute)
        and (
            getattr(node, "arg", None) == "fit_options"
            or getattr(node, "attr", None) == "fit_options"
        )
    ]
    assert not offenders, "\n".join(map(str, offenders))
