"""Regenerate every data file shipped by :mod:`statcore.datasets`, and ``MANIFEST``.

The files are written once, by hand, from copies that installed packages already carry
(``statsmodels.datasets`` and ``networkx``); nothing is downloaded, and nothing here runs at
test or import time. Run it from anywhere::

    .venv/bin/python data/make_datasets.py            # rewrite the files beside this script
    .venv/bin/python data/make_datasets.py --check    # only compare, write nothing

It needs the ``dev`` extra (statsmodels). Each file is written deterministically (``\\n`` line
ends, floats at full round-trip precision), so running it again with the same package versions
reproduces ``MANIFEST`` byte for byte; ``--check`` exits with status 1 if any file would change.
The package versions that produced the committed files are listed in ``README.md``.

Formats
-------
tables (``<name>.csv``)
    Comma-separated, one header row, no index column.
network edges (``<name>.edgelist``)
    ``#`` comment lines, then one edge a line: ``u v`` or ``u v weight``, separated by one
    space. Used only when no node label contains whitespace or ``#``.
network edges (``<name>_edges.csv``)
    ``source,target`` CSV, for networks whose node labels contain spaces.
network nodes (``<name>_nodes.csv``)
    Every node, in networkx's order, in a column ``node``, followed by one column per node
    attribute.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
from scipy import sparse

HERE = Path(__file__).resolve().parent
# the SyNGLER real networks, as the project received them (outside the repository)
NETWORKS = HERE.parents[1] / "shared" / "data" / "networks"

# Files of this folder that are not shipped data (and so not in MANIFEST).
NOT_DATA = {"MANIFEST", "README.md", "make_datasets.py"}


# --------------------------------------------------------------------------- writers


def _csv_text(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False, lineterminator="\n")
    return buffer.getvalue()


def _table(module_name: str, *, drop: tuple[str, ...] = (), ints: tuple[str, ...] = ()) -> str:
    """The CSV text of ``statsmodels.datasets.<module_name>.load_pandas().data``.

    ``ints`` are columns whose values are all whole numbers in the original file; they are
    written without a decimal point (statsmodels reads every numeric column as float64).
    """
    import importlib

    module = importlib.import_module(f"statsmodels.datasets.{module_name}")
    frame = module.load_pandas().data.copy()
    frame = frame.drop(columns=list(drop), errors="ignore")
    for column in ints:
        values = frame[column].to_numpy(dtype=np.float64)
        if not np.array_equal(values, np.round(values)):
            raise ValueError(f"{module_name}.{column} is not whole-numbered")
        frame[column] = values.astype(np.int64)
    text = _csv_text(frame)
    # The text must give back exactly the floats statsmodels holds, parsed with Python's
    # correctly rounded float() (which is what statcore.datasets.load uses).
    back = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    for column in frame.columns:
        if frame[column].dtype.kind == "f":
            parsed = np.array([float(s) for s in back[column]], dtype=np.float64)
            if not np.array_equal(parsed, frame[column].to_numpy()):
                raise ValueError(f"{module_name}.{column} does not round-trip through CSV")
    return text


def _co2() -> str:
    """Mauna Loa weekly CO2 with the week as an ISO date column; unsampled weeks are dropped."""
    from statsmodels.datasets import co2

    frame = co2.load_pandas().data.dropna()
    frame = pd.DataFrame({"date": frame.index.strftime("%Y-%m-%d"), "co2": frame["co2"].to_numpy()})
    return _csv_text(frame)


def _elnino() -> str:
    """Monthly Nino 1+2 sea surface temperature in long form: one row per (year, month)."""
    from statsmodels.datasets import elnino

    wide = elnino.load_pandas().data
    months = list(wide.columns[1:])
    years = wide["YEAR"].to_numpy(dtype=np.float64)
    if not np.array_equal(years, np.round(years)):
        raise ValueError("elnino.YEAR is not whole-numbered")
    frame = pd.DataFrame(
        {
            "year": np.repeat(years.astype(np.int64), len(months)),
            "month": np.tile(np.arange(1, len(months) + 1, dtype=np.int64), len(wide)),
            "sst": wide[months].to_numpy(dtype=np.float64).ravel(),
        }
    )
    return _csv_text(frame)


def _connectomes() -> str:
    """The MLSP 2014 functional connectivity features with each subject's diagnosis.

    Read from the copy geomstats ships (found without importing geomstats), joined on the
    subject id; the values are written as parsed from its text.
    """
    import importlib.util

    spec = importlib.util.find_spec("geomstats")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the connectome files come from geomstats: install the manifold extra")
    folder = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "connectomes"
    features = pd.read_csv(folder / "train_FNC.csv", dtype=str, keep_default_na=False)
    labels = pd.read_csv(folder / "train_labels.csv", dtype=str, keep_default_na=False)
    merged = labels.merge(features, on="Id", how="inner", validate="one_to_one")
    if len(merged) != len(features) or len(merged) != len(labels):
        raise ValueError("connectome features and labels do not pair one to one")
    frame = pd.DataFrame(
        {
            "subject": merged["Id"].astype(np.int64),
            "schizophrenia": merged["Class"].astype(np.int64),
        }
    )
    fnc = [c for c in features.columns if c != "Id"]
    values = pd.DataFrame({c: [float(v) for v in merged[c]] for c in fnc})
    return _csv_text(pd.concat([frame, values], axis=1))


def _check_label(label) -> None:
    text = str(label)
    if not text or any(ch.isspace() for ch in text) or "#" in text:
        raise ValueError(f"node label {label!r} cannot go into a whitespace-separated edge list")


def _edgelist(graph: nx.Graph, header: list[str], weight: str | None) -> str:
    lines = [f"# {line}" if line else "#" for line in header]
    lines.append("# columns: u v" + (f" {weight}" if weight else ""))
    for u, v, data in graph.edges(data=True):
        _check_label(u)
        _check_label(v)
        if weight is None:
            lines.append(f"{u} {v}")
        else:
            lines.append(f"{u} {v} {data[weight]!r}")
    return "\n".join(lines) + "\n"


def _edges_csv(graph: nx.Graph) -> str:
    return _csv_text(pd.DataFrame(list(graph.edges()), columns=["source", "target"]))


def _nodes_csv(graph: nx.Graph, attributes: tuple[str, ...] = ()) -> str:
    rows = {"node": list(graph.nodes)}
    for attribute in attributes:
        rows[attribute] = [graph.nodes[n][attribute] for n in graph.nodes]
    return _csv_text(pd.DataFrame(rows))


def build(networks: Path = NETWORKS) -> dict[str, str]:
    """Return ``{file name: text}`` for every shipped file."""
    files: dict[str, str] = {}

    # Tables from statsmodels.datasets.
    files["co2.csv"] = _co2()
    files["connectomes.csv"] = _connectomes()
    files["engel.csv"] = _table("engel")
    files["grunfeld.csv"] = _table("grunfeld", ints=("year",))
    files["longley.csv"] = _table(
        "longley", ints=("TOTEMP", "GNP", "UNEMP", "ARMED", "POP", "YEAR")
    )
    files["stackloss.csv"] = _table(
        "stackloss", ints=("STACKLOSS", "AIRFLOW", "WATERTEMP", "ACIDCONC")
    )
    files["sunspots.csv"] = _table("sunspots", ints=("YEAR",))
    files["elnino.csv"] = _elnino()
    files["anes96.csv"] = _table(
        "anes96",
        ints=(
            "popul",
            "TVnews",
            "selfLR",
            "ClinLR",
            "DoleLR",
            "PID",
            "age",
            "educ",
            "income",
            "vote",
        ),
    )

    # Networks from networkx.
    karate = nx.karate_club_graph()
    files["karate.edgelist"] = _edgelist(
        karate,
        [
            "Zachary's karate club: 34 members, 78 friendship ties.",
            "source: networkx.karate_club_graph()",
            "Zachary, W. W. (1977). An information flow model for conflict and fission in",
            "small groups. Journal of Anthropological Research 33, 452-473.",
            "weight: number of contexts in which the two members interacted.",
            "node attribute 'club' is in karate_nodes.csv",
        ],
        weight="weight",
    )
    files["karate_nodes.csv"] = _nodes_csv(karate, ("club",))

    lesmis = nx.les_miserables_graph()
    files["les_miserables.edgelist"] = _edgelist(
        lesmis,
        [
            "Co-appearance network of the characters of Victor Hugo's Les Miserables.",
            "source: networkx.les_miserables_graph()",
            "Knuth, D. E. (1993). The Stanford GraphBase: a platform for combinatorial",
            "computing, pp. 74-87. New York: ACM Press.",
            "weight: number of chapters in which the two characters appear together.",
            "node order is in les_miserables_nodes.csv",
        ],
        weight="weight",
    )
    files["les_miserables_nodes.csv"] = _nodes_csv(lesmis)

    florentine = nx.florentine_families_graph()
    files["florentine_families.edgelist"] = _edgelist(
        florentine,
        [
            "Marriage ties between Renaissance Florentine families (Padgett's data).",
            "source: networkx.florentine_families_graph()",
            "Breiger, R. L. and Pattison, P. E. (1986). Cumulated social roles: the duality",
            "of persons and their algebras. Social Networks 8(3), 215-256.",
            "node order is in florentine_families_nodes.csv",
        ],
        weight=None,
    )
    files["florentine_families_nodes.csv"] = _nodes_csv(florentine)

    davis = nx.davis_southern_women_graph()
    files["davis_southern_women_edges.csv"] = _edges_csv(davis)
    files["davis_southern_women_nodes.csv"] = _nodes_csv(davis, ("bipartite",))
    files.update(_syngler_networks(networks))
    return files


SYNGLER_SOURCES = {
    "youtube": (
        "youtube_1991.npy",
        [
            "YouTube friendship subgraph used by the SyNGLER paper (1,991 nodes, 51,756 edges).",
            "source: FeifanJiang/syngler, data/real/youtube/generator/seed=0.npy (MIT licence);",
            "originally SNAP com-Youtube (Yang and Leskovec 2012).",
            "node order is in youtube_nodes.csv",
        ],
    ),
    "cora_ml": (
        "cora_ml.npz",
        [
            "Cora-ML citation network, undirected (2,810 nodes, 7,981 edges).",
            "source: FeifanJiang/syngler, baselines/cell/src/data/CORA-ML.npz (MIT licence);",
            "McCallum et al. (2000), Bojchevski and Guennemann (2018).",
            "node order is in cora_ml_nodes.csv",
        ],
    ),
}


def _syngler_networks(folder: Path) -> dict[str, str]:
    """Edge lists of the SyNGLER real networks, from the shared folder when it is present.

    The sources sit outside the repository (``../shared/data/networks``); without them the
    files already in this folder are carried over unchanged.
    """
    files = {}
    for name, (source, header) in SYNGLER_SOURCES.items():
        edge_file, node_file = f"{name}.edgelist", f"{name}_nodes.csv"
        path = folder / source
        if not path.exists():
            for existing in (edge_file, node_file):
                files[existing] = (HERE / existing).read_text(encoding="utf-8")
            continue
        if source.endswith(".npy"):
            adjacency = sparse.csr_matrix(np.load(path))
        else:
            adjacency = sparse.load_npz(path).tocsr()
        graph = nx.from_scipy_sparse_array(adjacency)
        files[edge_file] = _edgelist(graph, header, weight=None)
        files[node_file] = _nodes_csv(graph)
    return files


def manifest_text(files: dict[str, str]) -> str:
    """``sha256sum``-compatible lines, ``<hex digest>  <file name>``, sorted by name."""
    lines = [
        f"{hashlib.sha256(files[name].encode('utf-8')).hexdigest()}  {name}"
        for name in sorted(files)
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; write nothing")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write (default: here)")
    parser.add_argument(
        "--networks", type=Path, default=NETWORKS, help="folder of the SyNGLER source networks"
    )
    args = parser.parse_args(argv)

    files = build(args.networks)
    files_and_manifest = {**files, "MANIFEST": manifest_text(files)}
    changed = []
    for name, text in files_and_manifest.items():
        path = args.out / name
        old = path.read_bytes() if path.exists() else None
        if old != text.encode("utf-8"):
            changed.append(name)
            if not args.check:
                path.write_bytes(text.encode("utf-8"))
    stale = sorted(
        p.name
        for p in args.out.iterdir()
        if p.is_file() and p.name not in NOT_DATA and p.name not in files
    )
    for name in changed:
        print(("differs: " if args.check else "wrote: ") + name)
    for name in stale:
        print(f"not generated by this script (remove it or add it here): {name}")
    if args.check and (changed or stale):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
