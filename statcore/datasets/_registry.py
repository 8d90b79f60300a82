"""What each shipped data set is: its files, column types, description and source.

This is the one place the data sets are described in code; ``data/README.md`` describes the
same files for people, and ``data/make_datasets.py`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Column / attribute types understood by the readers in ``statcore.datasets``.
FLOAT, INT, STR, CATEGORY = "float64", "int64", "str", "category"


@dataclass(frozen=True)
class Table:
    """A data frame stored as one CSV file."""

    name: str
    file: str
    columns: dict[str, str]  # column name -> FLOAT | INT | CATEGORY, in file order
    nobs: int
    description: str
    source: str
    kind: str = field(default="table", init=False)


@dataclass(frozen=True)
class Network:
    """An undirected graph stored as an edge file and a node file."""

    name: str
    edges_file: str  # ``.edgelist`` (whitespace-separated) or ``_edges.csv`` (source,target)
    nodes_file: str  # column ``node`` (every node, in order), then one column per attribute
    node_type: str  # INT | STR
    node_attributes: dict[str, str]  # attribute -> INT | STR
    weight: str | None  # name of the third (integer) edge column, if any
    nobs: int  # number of nodes
    nedges: int
    description: str
    source: str
    graph_attributes: dict[str, str] = field(default_factory=dict)
    kind: str = field(default="network", init=False)


DATASETS: dict[str, Table | Network] = {
    d.name: d
    for d in (
        Table(
            name="co2",
            file="co2.csv",
            columns={"date": STR, "co2": FLOAT},
            nobs=2225,
            description=(
                "Weekly atmospheric CO2 concentration (ppm, mole fraction in dry air) at Mauna "
                "Loa, March 1958 - December 2001: weekly means of continuous infrared-analyser "
                "readings (four an hour), recorded to 0.1 ppm; the 59 "
                "weeks without a reading are omitted. `date` is the week's ISO date."
            ),
            source=(
                "statsmodels.datasets.co2; Keeling, C. D. and Whorf, T. P. (2004), Atmospheric "
                "CO2 concentrations derived from flask air samples at sites in the SIO network, "
                "in Trends: A Compendium of Data on Global Change, CDIAC, Oak Ridge National "
                "Laboratory. Public domain."
            ),
        ),
        Table(
            name="connectomes",
            file="connectomes.csv",
            columns={
                "subject": INT,
                "schizophrenia": INT,
                **{f"FNC{k}": FLOAT for k in range(1, 379)},
            },
            nobs=86,
            description=(
                "Resting-state functional connectivity of 86 subjects (46 controls, 40 with "
                "schizophrenia): FNC1-FNC378 are the correlations between 28 ICA brain "
                "networks' time courses, the upper triangle of each 28 x 28 correlation "
                "matrix in row-major order (numpy's triu_indices(28, 1)); `schizophrenia` is "
                "the diagnosis (1) or control (0)."
            ),
            source=(
                "MLSP 2014 Schizophrenia Classification Challenge (Kaggle) training set, as "
                "redistributed in geomstats (geomstats/datasets/data/connectomes, MIT-licensed "
                "package); Silva, R. F. et al. (2014), The tenth annual MLSP competition: "
                "schizophrenia classification challenge, IEEE MLSP."
            ),
        ),
        Table(
            name="engel",
            file="engel.csv",
            columns={"income": FLOAT, "foodexp": FLOAT},
            nobs=235,
            description=(
                "Annual income and food expenditure (Belgian francs) of 235 Belgian "
                "working-class households, 1857; the classic quantile-regression example."
            ),
            source=(
                "statsmodels.datasets.engel; Koenker, R. and Bassett, G. (1982), Robust tests "
                "for heteroscedasticity based on regression quantiles, Econometrica 50, 43-61 "
                "(data from the R package quantreg). Public domain."
            ),
        ),
        Table(
            name="grunfeld",
            file="grunfeld.csv",
            columns={
                "invest": FLOAT,
                "value": FLOAT,
                "capital": FLOAT,
                "firm": CATEGORY,
                "year": INT,
            },
            nobs=220,
            description=(
                "Grunfeld investment panel: gross investment, market value and capital stock "
                "of 11 US firms, 1935-1954 (20 years each); `firm` is categorical."
            ),
            source=(
                "statsmodels.datasets.grunfeld; Grunfeld, Y. (1958), The Determinants of "
                "Corporate Investment, PhD thesis, University of Chicago, as recreated by "
                "Kleiber, C. and Zeileis, A., The Grunfeld data at 50. Public domain."
            ),
        ),
        Table(
            name="longley",
            file="longley.csv",
            columns={
                "TOTEMP": INT,
                "GNPDEFL": FLOAT,
                "GNP": INT,
                "UNEMP": INT,
                "ARMED": INT,
                "POP": INT,
                "YEAR": INT,
            },
            nobs=16,
            description=(
                "Longley's highly collinear US macroeconomic series, 1947-1962; a test of the "
                "numerical accuracy of least-squares routines."
            ),
            source=(
                "statsmodels.datasets.longley; Longley, J. W. (1967), An appraisal of "
                "least squares programs for the electronic computer from the point of view of "
                "the user, JASA 62, 819-841 (NIST StRD). Public domain."
            ),
        ),
        Table(
            name="stackloss",
            file="stackloss.csv",
            columns={
                "STACKLOSS": INT,
                "AIRFLOW": INT,
                "WATERTEMP": INT,
                "ACIDCONC": INT,
            },
            nobs=21,
            description=(
                "Brownlee's stack-loss data: 21 days of operation of a plant oxidising ammonia "
                "to nitric acid; a classic robust-regression example."
            ),
            source=(
                "statsmodels.datasets.stackloss; Brownlee, K. A. (1965), Statistical Theory "
                "and Methodology in Science and Engineering, 2nd ed., Wiley. Public domain."
            ),
        ),
        Table(
            name="sunspots",
            file="sunspots.csv",
            columns={"YEAR": INT, "SUNACTIVITY": FLOAT},
            nobs=309,
            description=(
                "Yearly mean sunspot number, 1700-2008 (the Wolf / Zurich series as NOAA's "
                "NGDC distributed it); a short, strongly cyclic (about 11-year) series."
            ),
            source=(
                "statsmodels.datasets.sunspots; NOAA National Geophysical Data Center, "
                "solar data services (sunspots_yearly.dat). Public domain."
            ),
        ),
        Table(
            name="elnino",
            file="elnino.csv",
            columns={"year": INT, "month": INT, "sst": FLOAT},
            nobs=732,
            description=(
                "Monthly sea surface temperature (degrees C) of the Nino 1+2 region of the "
                "eastern Pacific, January 1950 - December 2010, one row per month (statsmodels' "
                "year-by-month table in long form)."
            ),
            source=(
                "statsmodels.datasets.elnino; NOAA National Weather Service, Climate Prediction "
                "Center, ERSST.V3B Nino 1+2 index. Public domain."
            ),
        ),
        Table(
            name="anes96",
            file="anes96.csv",
            columns={
                "popul": INT,
                "TVnews": INT,
                "selfLR": INT,
                "ClinLR": INT,
                "DoleLR": INT,
                "PID": INT,
                "age": INT,
                "educ": INT,
                "income": INT,
                "vote": INT,
                "logpopul": FLOAT,
            },
            nobs=944,
            description=(
                "1996 American National Election Study: 944 respondents' age, education "
                "(1-7: grades to PhD), income bracket (1-24), party identification, left-right "
                "self-placement and placements of Clinton and Dole, TV news days, town "
                "population, expected Dole vote."
            ),
            source=(
                "statsmodels.datasets.anes96; The American National Election Studies "
                "(www.electionstudies.org), 1996 Time Series Study. Public domain."
            ),
        ),
        Network(
            name="karate",
            edges_file="karate.edgelist",
            nodes_file="karate_nodes.csv",
            node_type=INT,
            node_attributes={"club": STR},
            weight="weight",
            nobs=34,
            nedges=78,
            graph_attributes={"name": "Zachary's Karate Club"},
            description=(
                "Zachary's karate club: friendships among 34 members of a club that split in "
                "two; node attribute `club` ('Mr. Hi' or 'Officer'), edge `weight` = number "
                "of contexts of interaction."
            ),
            source=(
                "networkx.karate_club_graph(); Zachary, W. W. (1977), An information flow "
                "model for conflict and fission in small groups, Journal of Anthropological "
                "Research 33, 452-473. Distributed with networkx (BSD-3-Clause)."
            ),
        ),
        Network(
            name="les_miserables",
            edges_file="les_miserables.edgelist",
            nodes_file="les_miserables_nodes.csv",
            node_type=STR,
            node_attributes={},
            weight="weight",
            nobs=77,
            nedges=254,
            description=(
                "Co-appearance network of the 77 characters of Victor Hugo's Les Miserables; "
                "edge `weight` = number of chapters in which the two characters appear together."
            ),
            source=(
                "networkx.les_miserables_graph(); Knuth, D. E. (1993), The Stanford GraphBase: "
                "a platform for combinatorial computing, pp. 74-87, ACM Press. Distributed "
                "with networkx (BSD-3-Clause)."
            ),
        ),
        Network(
            name="florentine_families",
            edges_file="florentine_families.edgelist",
            nodes_file="florentine_families_nodes.csv",
            node_type=STR,
            node_attributes={},
            weight=None,
            nobs=15,
            nedges=20,
            description=(
                "Marriage ties among 15 Renaissance Florentine families (Padgett's data; the "
                "isolated Pucci family is not included)."
            ),
            source=(
                "networkx.florentine_families_graph(); Breiger, R. L. and Pattison, P. E. "
                "(1986), Cumulated social roles: the duality of persons and their algebras, "
                "Social Networks 8, 215-256. Distributed with networkx (BSD-3-Clause)."
            ),
        ),
        Network(
            name="davis_southern_women",
            edges_file="davis_southern_women_edges.csv",
            nodes_file="davis_southern_women_nodes.csv",
            node_type=STR,
            node_attributes={"bipartite": INT},
            weight=None,
            nobs=32,
            nedges=89,
            description=(
                "Davis's Southern women: bipartite attendance network of 18 women and 14 social "
                "events; node attribute `bipartite` (0 = woman, 1 = event), graph attributes "
                "`top` (women) and `bottom` (events)."
            ),
            source=(
                "networkx.davis_southern_women_graph(); Davis, A., Gardner, B. B. and "
                "Gardner, M. R. (1941), Deep South, University of Chicago Press. Distributed "
                "with networkx (BSD-3-Clause)."
            ),
        ),
        Network(
            name="youtube",
            edges_file="youtube.edgelist",
            nodes_file="youtube_nodes.csv",
            node_type=INT,
            node_attributes={},
            weight=None,
            nobs=1991,
            nedges=51756,
            description=(
                "Connected YouTube friendship subgraph (1,991 users, 51,756 ties) that the "
                "SyNGLER paper fits its latent space model to."
            ),
            source=(
                "FeifanJiang/syngler, data/real/youtube/generator/seed=0.npy (MIT licence); "
                "originally SNAP com-Youtube: Yang, J. and Leskovec, J. (2012), Defining and "
                "evaluating network communities based on ground-truth, ICDM."
            ),
        ),
        Network(
            name="cora_ml",
            edges_file="cora_ml.edgelist",
            nodes_file="cora_ml_nodes.csv",
            node_type=INT,
            node_attributes={},
            weight=None,
            nobs=2810,
            nedges=7981,
            description=(
                "Cora-ML citation network, undirected and connected (2,810 papers, 7,981 "
                "citations), as used by the SyNGLER paper's baselines."
            ),
            source=(
                "FeifanJiang/syngler, baselines/cell/src/data/CORA-ML.npz (MIT licence); "
                "McCallum, A. et al. (2000), Automating the construction of internet portals "
                "with machine learning, Information Retrieval 3; Bojchevski, A. and "
                "Guennemann, S. (2018), Deep Gaussian embedding of graphs, ICLR."
            ),
        ),
    )
}
