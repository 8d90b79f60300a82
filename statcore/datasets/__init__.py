"""Small, classic data sets shipped with statcore, for examples, tests and vignettes.

Nothing is downloaded: the files are part of the package (one copy, in the repository's
top-level ``data/`` folder, seen by the package through the ``_files`` link). Their provenance,
licences, columns and checksums are in ``data/README.md`` and ``data/MANIFEST``.

==========================  =======  =====  ==============================================
name                        kind     nobs   contents
==========================  =======  =====  ==============================================
``co2``                     table     2225  date (ISO week, str), co2 (float64, ppm)
``connectomes``             table       86  subject, schizophrenia (int64), FNC1-FNC378
                                            (float64: 28 x 28 correlations, upper triangle)
``engel``                   table      235  income, foodexp (float64)
``grunfeld``                table      220  invest, value, capital (float64), firm
                                            (Categorical, 11 firms), year (int64)
``longley``                 table       16  TOTEMP, GNPDEFL, GNP, UNEMP, ARMED, POP, YEAR
                                            (int64 except GNPDEFL, float64)
``stackloss``               table       21  STACKLOSS, AIRFLOW, WATERTEMP, ACIDCONC (int64)
``sunspots``                table      309  YEAR (int64), SUNACTIVITY (float64)
``elnino``                  table      732  year, month (int64), sst (float64, degrees C)
``anes96``                  table      944  11 survey columns (int64 except logpopul)
``karate``                  network     34  78 weighted edges; node attribute ``club``
``les_miserables``          network     77  254 weighted edges
``florentine_families``     network     15  20 edges
``davis_southern_women``    network     32  89 edges, bipartite (node attribute
                                            ``bipartite``: 0 women, 1 events)
``youtube``                 network   1991  51756 edges (SyNGLER authors' subgraph)
``cora_ml``                 network   2810  7981 edges (SyNGLER authors' graph)
==========================  =======  =====  ==============================================

Examples
--------
>>> from statcore import datasets
>>> engel = datasets.load("engel")
>>> engel.shape
(235, 2)
>>> G = datasets.load("karate")
>>> G.number_of_nodes(), G.nodes[0]["club"]
(34, 'Mr. Hi')
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from statcore.datasets._registry import CATEGORY, DATASETS, FLOAT, INT, STR, Network, Table
from statcore.validation import check_option

__all__ = ["list_datasets", "load"]


def list_datasets() -> pd.DataFrame:
    """List the shipped data sets.

    Returns
    -------
    pandas.DataFrame
        One row per data set, in a fixed order, with columns

        ``name`` : str
            What to pass to :func:`load`.
        ``kind`` : str
            ``"table"`` (``load`` returns a DataFrame) or ``"network"`` (a ``networkx.Graph``).
        ``nobs`` : int
            Number of rows of a table, number of nodes of a network.
        ``description`` : str
            What the data are.
        ``source`` : str
            Where the shipped copy was taken from, the original reference and the licence.

    Examples
    --------
    >>> from statcore.datasets import list_datasets
    >>> list_datasets().loc[lambda d: d.kind == "network", "name"].tolist()[:4]
    ['karate', 'les_miserables', 'florentine_families', 'davis_southern_women']
    """
    rows = [
        {
            "name": d.name,
            "kind": d.kind,
            "nobs": d.nobs,
            "description": d.description,
            "source": d.source,
        }
        for d in DATASETS.values()
    ]
    frame = pd.DataFrame(rows, columns=["name", "kind", "nobs", "description", "source"])
    return frame.astype({"nobs": np.int64})


def load(name: str) -> pd.DataFrame | nx.Graph:
    """Load a shipped data set.

    Parameters
    ----------
    name : str
        One of the names in ``list_datasets()["name"]``.

    Returns
    -------
    pandas.DataFrame or networkx.Graph
        For a table, a new DataFrame (a fresh object on every call, so it may be modified
        freely) with a default ``RangeIndex``. Numeric columns are ``float64``, or ``int64``
        where every value in the original data is a whole number; text columns (only
        ``grunfeld.firm``) are unordered ``pandas.Categorical`` with the categories in the
        order in which they first appear. ``df.attrs["description"]`` and
        ``df.attrs["source"]`` say what the data are and where they come from.

        For a network, a new undirected ``networkx.Graph`` whose nodes are in the same order
        and carry the same attributes as networkx's own copy (``karate``: ``club``;
        ``davis_southern_women``: ``bipartite``), whose edges carry an integer ``weight``
        where the data have one (``karate``, ``les_miserables``), and whose ``G.graph`` has
        ``"description"`` and ``"source"`` (and, as in networkx, ``"name"`` for ``karate``
        and ``"top"``/``"bottom"`` node lists for ``davis_southern_women``).

    Raises
    ------
    ValueError
        If ``name`` is not the name of a shipped data set.

    Examples
    --------
    >>> from statcore.datasets import load
    >>> load("grunfeld")["firm"].cat.categories[:3].tolist()
    ['General Motors', 'US Steel', 'General Electric']
    >>> load("les_miserables")["Valjean"]["Javert"]["weight"]
    17
    """
    check_option(name, name="name", options=tuple(DATASETS))
    spec = DATASETS[name]
    if isinstance(spec, Table):
        return _load_table(spec)
    return _load_network(spec)


# --------------------------------------------------------------------------- readers


def _data_dir():
    """The folder holding the data files (a ``Traversable``; a ``Path`` when not zipped).

    Normally ``statcore/datasets/_files``: in a wheel a real folder, in a checkout a link to
    the top-level ``data/`` folder. Where a checkout could not create the link (git with
    ``core.symlinks=false`` writes it as a small text file), the ``data/`` folder itself.
    """
    packaged = resources.files(__name__) / "_files"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "data"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"statcore's data files are missing: neither {packaged} nor {checkout} is a folder; "
        "reinstall statcore, or in a checkout restore the link statcore/datasets/_files -> "
        "../../data"
    )


def _read_text(file: str) -> str:
    return (_data_dir() / file).read_text(encoding="utf-8")


def _read_csv_as_text(file: str) -> pd.DataFrame:
    # Everything as text, nothing turned into NaN: the readers below convert each column
    # themselves, so parsing does not depend on pandas' version or its float parser.
    return pd.read_csv(io.StringIO(_read_text(file)), dtype=str, keep_default_na=False)


def _convert(values, kind: str):
    """Convert a sequence of strings to a column of type ``kind``."""
    values = list(values)
    if kind == FLOAT:
        # Python's float() is correctly rounded, so the stored round-trip repr gives back
        # exactly the float that was written.
        return np.array([float(v) for v in values], dtype=np.float64)
    if kind == INT:
        return np.array([int(v) for v in values], dtype=np.int64)
    if kind == STR:
        return np.array(values, dtype=object)
    if kind == CATEGORY:
        return pd.Categorical(values, categories=list(dict.fromkeys(values)), ordered=False)
    raise AssertionError(f"unknown column type {kind!r}")  # pragma: no cover


# Python types of node labels and node attributes (Python ints and strs, as networkx has).
_SCALAR = {INT: int, STR: str}


def _load_table(spec: Table) -> pd.DataFrame:
    raw = _read_csv_as_text(spec.file)
    if list(raw.columns) != list(spec.columns):
        raise RuntimeError(
            f"{spec.file} has columns {list(raw.columns)}; expected {list(spec.columns)}"
        )
    frame = pd.DataFrame({col: _convert(raw[col], kind) for col, kind in spec.columns.items()})
    frame.attrs["description"] = spec.description
    frame.attrs["source"] = spec.source
    return frame


def _load_network(spec: Network) -> nx.Graph:
    graph = nx.Graph()
    graph.graph.update(spec.graph_attributes)
    graph.graph["description"] = spec.description
    graph.graph["source"] = spec.source

    nodes = _read_csv_as_text(spec.nodes_file)
    node = _SCALAR[spec.node_type]
    converters = {attr: _SCALAR[kind] for attr, kind in spec.node_attributes.items()}
    for row in nodes.to_dict(orient="records"):
        graph.add_node(
            node(row["node"]), **{attr: conv(row[attr]) for attr, conv in converters.items()}
        )

    for u, v, data in _read_edges(spec):
        if u not in graph or v not in graph:
            raise RuntimeError(f"{spec.edges_file}: edge ({u!r}, {v!r}) names an unknown node")
        graph.add_edge(u, v, **data)

    if "bipartite" in spec.node_attributes:
        graph.graph["top"] = [n for n, side in graph.nodes(data="bipartite") if side == 0]
        graph.graph["bottom"] = [n for n, side in graph.nodes(data="bipartite") if side == 1]
    return graph


def _read_edges(spec: Network):
    """Yield ``(u, v, data)`` for each stored edge, with node labels of ``spec.node_type``."""
    node = _SCALAR[spec.node_type]
    if spec.edges_file.endswith(".csv"):
        raw = _read_csv_as_text(spec.edges_file)
        for u, v in zip(raw["source"], raw["target"], strict=True):
            yield node(u), node(v), {}
        return
    width = 2 if spec.weight is None else 3
    for number, line in enumerate(_read_text(spec.edges_file).splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != width:
            raise RuntimeError(
                f"{spec.edges_file}, line {number}: expected {width} fields; got {line!r}"
            )
        data = {} if spec.weight is None else {spec.weight: int(fields[2])}
        yield node(fields[0]), node(fields[1]), data
