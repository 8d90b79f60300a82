"""The documentation site (``make docs``): it builds, and what it shows is whole.

The repository's vignettes are executed once per module (they take minutes), checked, and the
site is built from the executed notebooks, so the vignettes are not run a second time.
"""

import importlib.util
import os
import pkgutil
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from test_vignettes import REPO_VIGNETTES

import mlcore
import statcore
from statcore._vignettes import build_vignettes

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("docs_build", REPO / "docs" / "build.py")
docs_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_build)

#: Tags whose text is code or MathJax input, where a ``$`` is what the author wrote.
_VERBATIM = {"script", "style", "pre", "code", "textarea"}


class _Page(HTMLParser):
    """Links, script sources, ids, the prose outside code and math, and the plain-text outputs
    (a cell's displayed value) of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.scripts, self.ids, self.prose, self.values = [], [], set(), [], []
        self._stack = []  # (tag, excluded, value) of the open elements

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        if tag in {"br", "img", "meta", "link", "input", "hr", "source", "wbr"}:
            return
        classes = (attrs.get("class") or "").split()
        excluded = tag in _VERBATIM or "math" in classes
        value = "text_plain" in classes and "output" in classes
        if value:
            self.values.append("")
        self._stack.append((tag, excluded, value))

    def handle_endtag(self, tag):
        for depth in range(len(self._stack) - 1, -1, -1):
            if self._stack[depth][0] == tag:
                del self._stack[depth:]
                return

    def handle_data(self, data):
        if not any(excluded for _, excluded, _ in self._stack):
            self.prose.append(data)
        if any(value for _, _, value in self._stack):
            self.values[-1] += data


_REPOSITORY_RUN = {}


def run_repository_vignettes(tmp_path_factory):
    """``(out_dir, results)`` of executing the repository's vignettes, once per test session
    (a plain cache shared by the site fixture and the test that checks every vignette ran)."""
    if "run" not in _REPOSITORY_RUN:
        out = tmp_path_factory.mktemp("repository_vignettes")
        # Two kernels at once: this file is one pytest worker's long pole, and the other
        # worker's core is idle once it has run the rest of the suite.
        _REPOSITORY_RUN["run"] = out, build_vignettes(REPO_VIGNETTES, out, jobs=2)
    return _REPOSITORY_RUN["run"]


def test_repository_vignettes_all_execute(tmp_path_factory):
    sources = sorted(REPO_VIGNETTES.glob("*.py"))
    assert sources, f"no vignettes found in {REPO_VIGNETTES}"
    _, results = run_repository_vignettes(tmp_path_factory)
    assert [result.name for result in results] == [source.stem for source in sources]
    assert all(result.html.with_suffix(".ipynb").exists() for result in results)
    failures = {result.name: result.traceback for result in results if not result.ok}
    assert not failures, "\n\n".join(f"{name}:\n{tb}" for name, tb in failures.items())


def test_vignettes_print_no_compile_notice_or_warning(tmp_path_factory):
    import nbformat

    _, results = run_repository_vignettes(tmp_path_factory)
    # make install fills numba's cache (statcore.warmup), so no vignette compiles a kernel, and
    # a warning a vignette expects is caught and reported in its own words, not left on stderr
    printed = {}
    for result in results:
        if not result.ok:
            continue
        cells = nbformat.read(result.html.with_suffix(".ipynb"), as_version=4).cells
        stderr = [
            output.text
            for cell in cells
            for output in cell.get("outputs", [])
            if output.output_type == "stream" and output.name == "stderr"
        ]
        if stderr:
            printed[result.name] = stderr
    assert not printed, printed


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    notebooks, results = run_repository_vignettes(tmp_path_factory)
    failed = [result.name for result in results if not result.ok]
    assert not failed, f"vignettes failed, so the site cannot be built: {failed}"
    out = tmp_path_factory.mktemp("docs")
    run = subprocess.run(
        [sys.executable, str(REPO / "docs" / "build.py"), str(out), "--notebooks", str(notebooks)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (out / "build.log").write_text(run.stderr, encoding="utf-8")
    html = out / "html"
    pages = {}
    for path in html.rglob("*.html"):
        parser = _Page()
        parser.feed(path.read_text(encoding="utf-8"))
        pages[path] = parser
    return html, pages


def test_every_expected_page_exists(site):
    html, _ = site
    expected = ["index.html", "vignettes.html", "search.html", "api/index.html"]
    expected += [f"vignettes/{p.stem}.html" for p in sorted(REPO_VIGNETTES.glob("*.py"))]
    expected += [f"api/{module.replace('.', '_')}.html" for module, _ in docs_build.API_AREAS]
    for module, _ in docs_build.API_AREAS:
        expected += [f"api/generated/{module}.{n}.html" for n in docs_build.public_names(module)]
        for submodule, names in docs_build.submodule_names(module).items():
            expected += [f"api/generated/{submodule}.{n}.html" for n in names]
    missing = [page for page in expected if not (html / page).is_file()]
    assert not missing, missing
    assert (html / "searchindex.js").is_file()


def test_api_reference_builds_without_warnings(site):
    """conf.py builds nitpicky: every cross-reference of a docstring resolves, and no docstring
    has markup Sphinx warns about. The vignette pages are checked by the tests below."""
    html, _ = site
    log = (html.parent / "build.log").read_text(encoding="utf-8")
    warnings = [
        line
        for line in log.splitlines()
        if ("WARNING" in line or "ERROR" in line) and "/vignettes/" not in line.split(":", 1)[0]
    ]
    assert not warnings, "\n".join(warnings[:30])


def test_fidelity_sections_are_rendered(site):
    """numpydoc drops a section it does not know; conf.py keeps "Fidelity" as a rubric."""
    html, _ = site
    page = (html / "api" / "generated" / "statcore.theory.pruning_alignment.html").read_text(
        encoding="utf-8"
    )
    assert re.search(r'<p class="rubric">Fidelity</p>\s*<p>Reconstruction:', page)


def test_api_reference_covers_every_public_area():
    areas = {module for module, _ in docs_build.API_AREAS}
    for package in (statcore, mlcore):
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                assert f"{package.__name__}.{info.name}" in areas, info.name


def test_index_describes_every_vignette(site):
    html, pages = site
    links = {unquote(urlsplit(link).path) for link in pages[html / "vignettes.html"].links}
    for source in sorted(REPO_VIGNETTES.glob("*.py")):
        assert f"vignettes/{source.stem}.html" in links, source.name


def test_vignette_pages_show_their_figures(site):
    html, _ = site
    for source in sorted(REPO_VIGNETTES.glob("*.py")):
        if "plt." in source.read_text() or ".plot(" in source.read_text():
            page = (html / "vignettes" / f"{source.stem}.html").read_text(encoding="utf-8")
            assert re.search(r'<img[^>]+src="[^"]+\.png"', page), source.name


def test_every_internal_link_resolves(site):
    html, pages = site
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("mailto:"):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if parts.path and not parts.path.endswith(".html"):
                if not target.exists():
                    broken.append((path.relative_to(html), link))
                continue
            if not target.is_file():
                broken.append((path.relative_to(html), link))
            elif parts.fragment and target in pages:
                if unquote(parts.fragment) not in pages[target].ids:
                    broken.append((path.relative_to(html), link))
    assert not broken, broken[:20]


def test_math_is_rendered_offline_and_no_page_loads_a_remote_script(site):
    html, pages = site
    remote = {
        path.relative_to(html): src
        for path, page in pages.items()
        for src in page.scripts
        if re.match(r"(https?:)?//", src)
    }
    assert not remote, remote
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    network = (html / "vignettes" / "06_network.html").read_text(encoding="utf-8")
    assert "_static/mathjax/tex-chtml.js" in network
    assert 'class="math notranslate nohighlight"' in network


def test_no_unrendered_math_error_cell_or_stray_repr(site):
    html, pages = site
    dollar_math = re.compile(r"\$[^$\s][^$]*\$")
    stray_repr = re.compile(r"^(<Axes\b|Text\(|<matplotlib\.|\[<matplotlib\.|<Figure size)", re.M)
    problems = []
    for path, page in pages.items():
        prose = "".join(page.prose)
        if found := dollar_math.search(prose):
            problems.append((path.relative_to(html), "unrendered math", found.group()))
        source = path.read_text(encoding="utf-8")
        # A docstring whose markup docutils could not parse shows as "problematic" text.
        if 'class="problematic"' in source:
            problems.append((path.relative_to(html), "docstring markup error", "problematic"))
        for mark in (
            "Traceback (most recent call last)",
            "This vignette failed",
            "output traceback",
        ):
            if mark in source:
                problems.append((path.relative_to(html), "error cell", mark))
        for value in page.values:
            if found := stray_repr.search(value.strip()):
                problems.append((path.relative_to(html), "stray repr", found.group()))
    assert not problems, problems
