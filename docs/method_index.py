"""The site's table of methods, made from the README's method table (the one list of them).

Each README row names the paper, its module, the fidelity label and the docstring that holds
its Fidelity section; here each row gains links to that name's API page and to the vignettes
that use it (those whose source names it, else those that import its module).
"""

import importlib
import re
from pathlib import Path

ROW = re.compile(
    r"^\| (?P<paper>.+?) \| (?P<modules>`[^|]+`) \| (?P<label>paper|reconstruction) \| "
    r"\[(?P<entry>[^\]]+)\]\((?P<path>[^)]+\.py)\) \|$",
    flags=re.M,
)


def method_rows(readme: str) -> list[dict]:
    """The README method table's rows: paper, modules, label, entry (```Name``` or ``module
    docstring``), path, ``module`` and ``name`` (the object's name, "" for a module docstring)."""
    rows = []
    for match in ROW.finditer(readme):
        row = match.groupdict()
        named = re.fullmatch(r"`(\w+)`", row["entry"])
        row["name"] = named.group(1) if named else ""
        row["module"] = row["path"].removesuffix(".py").replace("/", ".")
        rows.append(row)
    return rows


def _vignettes_of(row: dict, vignettes: list[Path]) -> list[str]:
    area = re.findall(r"`([^`]+)`", row["modules"])[0]
    sources = {path.stem: path.read_text(encoding="utf-8") for path in vignettes}
    if row["name"]:
        named = [stem for stem, text in sources.items() if re.search(rf"\b{row['name']}\b", text)]
        if named:
            return named
    pattern = rf"(from|import) {re.escape(area)}\b"
    return [stem for stem, text in sources.items() if re.search(pattern, text)]


def methods_page(readme: str, vignettes: list[Path], api_page) -> str:
    """Markdown of the site's methods page. ``api_page(target, name)`` gives the document path
    of the object ``target``'s API page (without suffix), or of its area's page when ``target``
    is a module and ``name`` is ``""``."""
    lines = [
        "# The 38 methods",
        "",
        "One row a paper: its module, the fidelity label (**paper**: checked against the paper's",
        "text or the authors' code; **reconstruction**: neither was available, and the docstring's",
        "Fidelity section names each reconstructed step), the API page and the vignettes.",
        "",
        "| method (paper) | module | label | API | vignettes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in method_rows(readme):
        module = importlib.import_module(row["module"])
        target = getattr(module, row["name"]) if row["name"] else module
        page = api_page(target, row["name"])
        title = row["name"] or row["module"]
        shown = ", ".join(f"{{doc}}`vignettes/{stem}`" for stem in _vignettes_of(row, vignettes))
        lines.append(
            f"| {row['paper']} | {row['modules']} | {row['label']} | "
            f"{{doc}}`{title} <{page}>` | {shown or '—'} |"
        )
    return "\n".join(lines) + "\n"
