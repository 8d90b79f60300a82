"""Tests of statcore.datasets and of the files shipped in data/."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from statcore import datasets
from statcore.datasets import list_datasets, load

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "data"
NOT_SHIPPED = {"MANIFEST", "README.md", "make_datasets.py"}

# The documented shape of every table: column -> dtype, and the number of rows.
TABLES = {
    "co2": (2225, {"date": "str", "co2": "float64"}),
    "connectomes": (
        86,
        {
            "subject": "int64",
            "schizophrenia": "int64",
            **{f"FNC{k}": "float64" for k in range(1, 379)},
        },
    ),
    "engel": (235, {"income": "float64", "foodexp": "float64"}),
    "grunfeld": (
        220,
        {
            "invest": "float64",
            "value": "float64",
            "capital": "float64",
            "firm": "category",
            "year": "int64",
        },
    ),
    "longley": (
        16,
        {
            "TOTEMP": "int64",
            "GNPDEFL": "float64",
            "GNP": "int64",
            "UNEMP": "int64",
            "ARMED": "int64",
            "POP": "int64",
            "YEAR": "int64",
        },
    ),
    "stackloss": (
        21,
        {"STACKLOSS": "int64", "AIRFLOW": "int64", "WATERTEMP": "int64", "ACIDCONC": "int64"},
    ),
    "sunspots": (309, {"YEAR": "int64", "SUNACTIVITY": "float64"}),
    "elnino": (732, {"year": "int64", "month": "int64", "sst": "float64"}),
    "anes96": (
        944,
        {
            "popul": "int64",
            "TVnews": "int64",
            "selfLR": "int64",
            "ClinLR": "int64",
            "DoleLR": "int64",
            "PID": "int64",
            "age": "int64",
            "educ": "int64",
            "income": "int64",
            "vote": "int64",
            "logpopul": "float64",
        },
    ),
}
# networkx constructor, nodes, edges, node attributes, edge attributes
NETWORKS = {
    "karate": (nx.karate_club_graph, 34, 78, {"club"}, {"weight"}),
    "les_miserables": (nx.les_miserables_graph, 77, 254, set(), {"weight"}),
    "florentine_families": (nx.florentine_families_graph, 15, 20, set(), set()),
    "davis_southern_women": (nx.davis_southern_women_graph, 32, 89, {"bipartite"}, set()),
}
# the SyNGLER paper's real networks: nodes, edges (from the authors' adjacency files)
REAL_NETWORKS = {"youtube": (1991, 51756), "cora_ml": (2810, 7981)}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest() -> dict[str, str]:
    entries = {}
    for line in (DATA / "MANIFEST").read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ")
        entries[name] = digest
    return entries


# --------------------------------------------------------------------------- list_datasets


def test_list_datasets_contents():
    listing = list_datasets()
    assert list(listing.columns) == ["name", "kind", "nobs", "description", "source"]
    assert listing["name"].tolist() == [*TABLES, *NETWORKS, *REAL_NETWORKS]
    assert listing["name"].is_unique
    kinds = dict(zip(listing["name"], listing["kind"], strict=True))
    assert all(kinds[n] == "table" for n in TABLES)
    assert all(kinds[n] == "network" for n in [*NETWORKS, *REAL_NETWORKS])
    assert listing["nobs"].dtype == np.int64
    nobs = dict(zip(listing["name"], listing["nobs"], strict=True))
    assert {n: nobs[n] for n in TABLES} == {n: rows for n, (rows, _) in TABLES.items()}
    assert {n: nobs[n] for n in NETWORKS} == {n: spec[1] for n, spec in NETWORKS.items()}
    assert {n: nobs[n] for n in REAL_NETWORKS} == {n: v[0] for n, v in REAL_NETWORKS.items()}
    for column in ("description", "source"):
        assert all(isinstance(t, str) and len(t) > 20 for t in listing[column])


def test_list_datasets_is_a_fresh_frame():
    first = list_datasets()
    first.loc[0, "name"] = "changed"
    assert list_datasets().loc[0, "name"] == "co2"


def test_list_agrees_with_load():
    for row in list_datasets().itertuples():
        obj = load(row.name)
        if row.kind == "table":
            assert isinstance(obj, pd.DataFrame)
            assert len(obj) == row.nobs
            assert obj.attrs == {"description": row.description, "source": row.source}
        else:
            assert isinstance(obj, nx.Graph) and not obj.is_directed()
            assert obj.number_of_nodes() == row.nobs
            assert obj.graph["description"] == row.description
            assert obj.graph["source"] == row.source


# --------------------------------------------------------------------------- tables


@pytest.mark.parametrize("name", list(TABLES))
def test_table_shape_columns_and_types(name):
    rows, columns = TABLES[name]
    frame = load(name)
    assert frame.shape == (rows, len(columns))
    assert {c: str(t) for c, t in frame.dtypes.items()} == columns
    assert isinstance(frame.index, pd.RangeIndex) and frame.index.equals(pd.RangeIndex(rows))
    assert not frame.isna().any().any()
    assert set(frame.attrs) == {"description", "source"}
    origin = "geomstats" if name == "connectomes" else "statsmodels.datasets." + name
    assert origin in frame.attrs["source"]


def test_engel_agrees_exactly_with_statsmodels():
    sm_engel = pytest.importorskip("statsmodels.datasets.engel")
    expected = sm_engel.load_pandas().data
    frame = load("engel")
    assert list(frame.columns) == list(expected.columns) == ["income", "foodexp"]
    for column in frame.columns:
        # Bit for bit: not merely close.
        np.testing.assert_array_equal(frame[column].to_numpy(), expected[column].to_numpy())
        assert frame[column].to_numpy().tobytes() == expected[column].to_numpy().tobytes()


@pytest.mark.parametrize("name", ["grunfeld", "longley", "stackloss", "sunspots"])
def test_other_tables_agree_with_statsmodels(name):
    module = pytest.importorskip(f"statsmodels.datasets.{name}")
    expected = module.load_pandas().data
    frame = load(name)
    assert list(frame.columns) == list(expected.columns)
    for column in frame.columns:
        ours, theirs = frame[column], expected[column]
        if isinstance(ours.dtype, pd.CategoricalDtype):
            assert ours.astype(str).tolist() == theirs.astype(str).tolist()
        else:
            np.testing.assert_array_equal(ours.to_numpy(np.float64), theirs.to_numpy(np.float64))


def test_co2_agrees_with_statsmodels_without_the_unsampled_weeks():
    module = pytest.importorskip("statsmodels.datasets.co2")
    expected = module.load_pandas().data.dropna()
    frame = load("co2")
    assert frame["date"].tolist() == expected.index.strftime("%Y-%m-%d").tolist()
    np.testing.assert_array_equal(frame["co2"].to_numpy(), expected["co2"].to_numpy())


def test_elnino_is_statsmodels_table_in_long_form():
    module = pytest.importorskip("statsmodels.datasets.elnino")
    wide = module.load_pandas().data
    frame = load("elnino")
    assert frame["year"].tolist() == np.repeat(wide["YEAR"].to_numpy(np.int64), 12).tolist()
    assert frame["month"].tolist() == list(range(1, 13)) * len(wide)
    np.testing.assert_array_equal(frame["sst"].to_numpy(), wide.iloc[:, 1:].to_numpy().ravel())


def test_connectomes_agree_with_geomstats_and_are_correlation_matrices():
    frame = load("connectomes")
    fnc = frame.filter(like="FNC").to_numpy()
    iu = np.triu_indices(28, 1)
    mats = np.repeat(np.eye(28)[None], len(frame), axis=0)
    mats[:, iu[0], iu[1]] = fnc
    mats[:, iu[1], iu[0]] = fnc
    # full correlation matrices: every one positive definite (smallest eigenvalue 0.006)
    assert np.linalg.eigvalsh(mats).min() > 0
    assert frame["schizophrenia"].value_counts().to_dict() == {0: 46, 1: 40}
    from statcore.compat import import_geomstats

    try:
        import_geomstats()
    except ImportError:
        pytest.skip("geomstats (the manifold extra) is not installed")
    from geomstats.datasets.utils import load_connectomes

    vectors, ids, target = load_connectomes(as_vectors=True)
    np.testing.assert_array_equal(frame["subject"].to_numpy(), np.asarray(ids))
    np.testing.assert_array_equal(frame["schizophrenia"].to_numpy(), np.asarray(target))
    np.testing.assert_allclose(fnc, np.asarray(vectors), rtol=0, atol=0)


def test_grunfeld_firm_is_categorical_in_order_of_appearance():
    firm = load("grunfeld")["firm"]
    assert not firm.cat.ordered
    assert firm.cat.categories.tolist() == list(dict.fromkeys(firm.astype(str)))
    assert len(firm.cat.categories) == 11
    assert firm.value_counts().eq(20).all()
    assert firm.cat.categories[0] == "General Motors"


@pytest.mark.parametrize("name", list(TABLES))
def test_loaded_frames_are_independent_copies(name):
    first, second = load(name), load(name)
    assert first is not second
    pristine = load(name)
    column = first.columns[0]
    for a in first.columns:
        for b in second.columns:
            assert not np.shares_memory(np.asarray(first[a]), np.asarray(second[b]))
    first.loc[0, column] = first.loc[1, column]
    first["extra"] = 1
    first.attrs["description"] = "mutated"
    if name == "grunfeld":
        first["firm"] = first["firm"].cat.rename_categories(lambda c: c.upper())
    pd.testing.assert_frame_equal(second, pristine)
    pd.testing.assert_frame_equal(load(name), pristine)
    assert load(name).attrs == pristine.attrs


# --------------------------------------------------------------------------- networks


def _edge_dict(graph: nx.Graph) -> dict[frozenset, dict]:
    return {frozenset((u, v)): dict(d) for u, v, d in graph.edges(data=True)}


@pytest.mark.parametrize("name", list(NETWORKS))
def test_network_equals_networkx_copy(name):
    make, n_nodes, n_edges, node_attrs, edge_attrs = NETWORKS[name]
    expected = make()
    graph = load(name)
    assert type(graph) is nx.Graph
    assert graph.number_of_nodes() == n_nodes and graph.number_of_edges() == n_edges
    assert list(graph.nodes) == list(expected.nodes)  # same order, same labels
    assert dict(graph.nodes(data=True)) == dict(expected.nodes(data=True))
    assert {k for _, d in graph.nodes(data=True) for k in d} == node_attrs
    assert _edge_dict(graph) == _edge_dict(expected)
    assert {k for _, _, d in graph.edges(data=True) for k in d} == edge_attrs
    assert nx.utils.graphs_equal(
        nx.Graph(graph.edges(data=True)), nx.Graph(expected.edges(data=True))
    )
    # networkx's own graph attributes are kept; description and source are added
    assert {k: graph.graph[k] for k in expected.graph} == expected.graph
    assert set(graph.graph) == set(expected.graph) | {"description", "source"}
    assert f"networkx.{make.__name__}()" in graph.graph["source"]


def test_karate_matches_networkx_with_club():
    graph, expected = load("karate"), nx.karate_club_graph()
    assert nx.is_isomorphic(graph, expected)
    assert set(graph.edges) == set(expected.edges)
    assert nx.get_node_attributes(graph, "club") == nx.get_node_attributes(expected, "club")
    assert set(nx.get_node_attributes(graph, "club").values()) == {"Mr. Hi", "Officer"}
    assert graph.nodes[9]["club"] == "Officer"
    assert all(type(n) is int for n in graph)
    assert all(type(w) is int for _, _, w in graph.edges(data="weight"))
    assert graph.graph["name"] == "Zachary's Karate Club"


def test_les_miserables_weights_and_davis_bipartite():
    lesmis = load("les_miserables")
    assert lesmis["Valjean"]["Javert"]["weight"] == 17
    assert nx.get_edge_attributes(lesmis, "weight") == nx.get_edge_attributes(
        nx.les_miserables_graph(), "weight"
    )
    davis = load("davis_southern_women")
    assert nx.is_bipartite(davis)
    assert len(davis.graph["top"]) == 18 and len(davis.graph["bottom"]) == 14
    assert "Evelyn Jefferson" in davis.graph["top"]
    assert all(davis.nodes[n]["bipartite"] == 0 for n in davis.graph["top"])


def test_loaded_graphs_are_independent():
    first, second = load("karate"), load("karate")
    assert first is not second
    first.add_edge(0, 99)
    first.nodes[0]["club"] = "changed"
    first[0][1]["weight"] = -1
    first.graph["name"] = "changed"
    assert second.number_of_nodes() == 34
    assert second.nodes[0]["club"] == "Mr. Hi"
    assert second[0][1]["weight"] == 4
    assert load("karate").graph["name"] == "Zachary's Karate Club"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("bad", ["nope", "Engel", "", 3, None])
def test_unknown_name(bad):
    with pytest.raises(ValueError) as info:
        load(bad)
    message = str(info.value)
    assert "`name`" in message
    for name in [*TABLES, *NETWORKS, *REAL_NETWORKS]:
        assert repr(name) in message
    assert f"got {bad!r}" in message


# --------------------------------------------------------------------------- files


def test_each_shipped_file_matches_manifest():
    manifest = _manifest()
    assert manifest, "MANIFEST is empty"
    for name, digest in manifest.items():
        assert _sha256(DATA / name) == digest, f"{name} does not match its MANIFEST sha256"


def test_manifest_lists_exactly_the_shipped_files():
    shipped = {p.name for p in DATA.iterdir() if p.is_file() and p.name not in NOT_SHIPPED}
    manifest = _manifest()
    assert set(manifest) == shipped
    assert list(manifest) == sorted(manifest)
    # every shipped file is read by some data set, and every file a data set reads is shipped
    used = set()
    for spec in datasets._registry.DATASETS.values():
        used |= {spec.file} if spec.kind == "table" else {spec.edges_file, spec.nodes_file}
    assert used == shipped
    # and each matches a package_data glob
    assert all(Path(n).suffix in {".csv", ".edgelist", ".json"} for n in shipped)


def test_readme_documents_every_file_and_its_checksum():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name, digest in _manifest().items():
        assert f"`{name}`" in readme
        assert digest in readme, f"README's sha256 of {name} is not MANIFEST's"
    for name in [*TABLES, *NETWORKS, *REAL_NETWORKS]:
        assert f"`{name}`" in readme or f"`{name}.csv`" in readme


def test_package_sees_data_through_relative_symlink():
    link = REPO / "statcore" / "datasets" / "_files"
    assert link.is_symlink()
    assert os.readlink(link) == "../../data"
    assert link.resolve() == DATA.resolve()
    assert Path(str(datasets._data_dir())).resolve() == DATA.resolve()


# --------------------------------------------------------------------------- wheel

_FINGERPRINT = """
def fingerprint(obj):
    if hasattr(obj, "to_csv"):  # a table: its dtypes and every value, as text
        return {
            "dtypes": {c: str(t) for c, t in obj.dtypes.items()},
            "csv": obj.to_csv(index=False),
            "attrs": obj.attrs,
        }
    return {  # a graph: nodes in order with attributes, edges with attributes, graph attrs
        "nodes": [[n, d] for n, d in obj.nodes(data=True)],
        "edges": [[u, v, d] for u, v, d in obj.edges(data=True)],
        "graph": obj.graph,
    }
"""

_WHEEL_CHECK = (
    _FINGERPRINT
    + """
import json, sys
from pathlib import Path
import statcore.datasets as d
files = d._data_dir()
out = {
    "module": str(Path(d.__file__).resolve()),
    "files_dir": str(files),
    "files_is_link": Path(str(files)).is_symlink(),
    "data": {name: fingerprint(d.load(name)) for name in d.list_datasets()["name"]},
}
json.dump(out, sys.stdout)
"""
)


def _copy_project(destination: Path) -> Path:
    """Copy the project (sources, data, build configuration) without build products.

    The wheel is built from a copy so that the build's ``build/`` and ``*.egg-info`` folders
    do not land in (or race with anyone else's use of) the working tree. ``symlinks=True``
    keeps ``statcore/datasets/_files`` the relative link it is in the checkout.
    """
    ignore = shutil.ignore_patterns(
        ".git",
        ".venv",
        "build",
        "dist",
        "*.egg-info",
        "__pycache__",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".benchmarks",
        "tests",
    )
    shutil.copytree(REPO, destination, symlinks=True, ignore=ignore)
    assert (destination / "statcore" / "datasets" / "_files").is_symlink()
    return destination


@pytest.mark.slow
def test_wheel_contains_data_and_load_works_from_it(tmp_path):
    source = _copy_project(tmp_path / "src")
    wheels = tmp_path / "wheels"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "-q",
            "-w",
            str(wheels),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = wheels.glob("statcore-*.whl")

    manifest = _manifest()
    prefix = "statcore/datasets/_files/"
    with zipfile.ZipFile(wheel) as archive:
        listing = archive.namelist()
        for name in manifest:
            assert prefix + name in listing, f"{name} is not in the wheel"
        # exactly the data files: not the README, MANIFEST or generation scripts; MetaEns's
        # score tables (data/outliers, checksums in its own README) ride along
        outliers = {f"outliers/{p.name}" for p in (REPO / "data" / "outliers").glob("*.npz")}
        assert outliers
        shipped = {n[len(prefix) :] for n in listing if n.startswith(prefix)}
        assert shipped == set(manifest) | outliers
        for name, digest in manifest.items():
            assert hashlib.sha256(archive.read(prefix + name)).hexdigest() == digest
        site = tmp_path / "site"
        archive.extractall(site)

    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run(
        [sys.executable, "-c", _WHEEL_CHECK],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    # the package, and the data it read, came from the extracted wheel, not the checkout
    assert Path(result["module"]).is_relative_to(site.resolve())
    assert Path(result["files_dir"]).resolve() == (site / prefix).resolve()
    assert not result["files_is_link"]
    # and what it loaded is what the checkout loads, value for value
    namespace: dict = {}
    exec(_FINGERPRINT, namespace)
    assert list(result["data"]) == [*TABLES, *NETWORKS, *REAL_NETWORKS]
    for name, from_wheel in result["data"].items():
        here = json.loads(json.dumps(namespace["fingerprint"](load(name))))
        assert from_wheel == here, f"{name} loads differently from the wheel"


@pytest.mark.parametrize("name", list(REAL_NETWORKS))
def test_syngler_real_networks_are_simple_connected_graphs(name):
    graph = load(name)
    n_nodes, n_edges = REAL_NETWORKS[name]
    assert graph.number_of_nodes() == n_nodes and graph.number_of_edges() == n_edges
    assert list(graph.nodes) == list(range(n_nodes))
    assert nx.is_connected(graph) and nx.number_of_selfloops(graph) == 0
    assert "syngler" in graph.graph["source"]


def test_youtube_matches_the_authors_adjacency_when_present():
    """Byte-level provenance check against the shared source file, where the checkout has it."""
    source = REPO.parent / "shared" / "data" / "networks" / "youtube_1991.npy"
    if not source.exists():
        pytest.skip("the shared source adjacency sits outside a bare clone")
    adjacency = np.load(source)
    loaded = nx.to_numpy_array(load("youtube"), nodelist=range(1991), dtype=np.uint8)
    np.testing.assert_array_equal(loaded, adjacency)
