"""Plotting helpers shared by every results object of statcore and mlcore (matplotlib, lazily).

``statcore.results`` never imports matplotlib until a plot is asked for. The helpers: a fresh
Axes (:func:`get_ax`) and its labels (:func:`label_axes`), a grid of panels (:func:`panel_axes`,
:func:`term_axes`: one per term, so that an intercept of 1,000 and a slope of 0.5 are each read
on their own scale), coefficient plots, histograms of draws, a matrix image with a colour bar,
and a legend placed beside the data.
"""

from __future__ import annotations

import math

import numpy as np

from statcore.results._format import format_level

#: Panels a coefficient plot draws unless ``terms=`` asks for others (a sparse fit has hundreds).
MAX_PANELS = 16


def get_ax(ax=None):
    """Return ``ax``, or a fresh Axes on a new figure when it is None."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new_ax = plt.subplots(figsize=(6.4, 4.0))
    return new_ax


def panel_axes(n: int, ax=None, *, ncols: int | None = None, sharex: bool = False):
    """``n`` Axes on a grid: on a new figure, or splitting the area of ``ax`` into panels.

    ``ax`` must then come from ``subplots`` / ``add_subplot`` (it is replaced by the panels);
    with ``n == 1`` it is used as it is. Returns a 1-D array of Axes.
    """
    import matplotlib.pyplot as plt

    ncols = ncols or min(n, 4)
    nrows = math.ceil(n / ncols)
    if ax is None:
        fig = plt.figure(figsize=(max(2.8 * ncols, 4.8), 2.4 * nrows + 0.5), layout="constrained")
        spec = fig.add_gridspec(nrows, ncols)
    elif n == 1:
        return np.array([ax])
    else:
        parent = ax.get_subplotspec()
        if parent is None:
            raise ValueError(
                f"`ax` must be a subplot (from `plt.subplots`) to be split into {n} panels; "
                "got an Axes placed by hand"
            )
        fig = ax.figure
        spec = parent.subgridspec(nrows, ncols)
        ax.remove()
    axes = []
    for i in range(n):
        share = axes[0] if sharex and axes else None
        axes.append(fig.add_subplot(spec[i // ncols, i % ncols], sharex=share))
    return np.array(axes)


def term_axes(n: int, ax=None):
    """``n`` Axes, one per term: a new grid (``ax=None``), the user's sequence of ``n`` Axes,
    or one subplot split into ``n`` panels (see `panel_axes`)."""
    if ax is not None and np.ndim(ax) > 0:
        axes = np.ravel(ax)
        if len(axes) != n:
            raise ValueError(f"`ax` must hold {n} Axes (one per term); got {len(axes)}")
        return axes
    return panel_axes(n, ax)


def label_axes(ax, xlabel=None, ylabel=None, title=None, *, legend=None):
    """Label an Axes, place its legend and return it: the closing lines of most ``plot``
    functions.

    Parameters
    ----------
    ax : matplotlib Axes
    xlabel, ylabel, title : str, optional
        Set when given; None leaves that label as it is (``""`` clears it).
    legend : {None, "inside", "beside"}
        No legend, matplotlib's own placement (``ax.legend()``), or outside the plotting area
        (:func:`legend_beside`, for plots whose lines fill it).

    Returns
    -------
    matplotlib Axes
        ``ax``, so that a plot function can end with ``return label_axes(ax, ...)``.
    """
    if legend == "inside":
        ax.legend()
    elif legend == "beside":
        legend_beside(ax)
    elif legend is not None:
        raise ValueError(f"`legend` must be None, 'inside' or 'beside'; got {legend!r}")
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    return ax


def legend_beside(ax, **kwargs):
    """A legend outside the plotting area, to the right, so that it never covers data."""
    kwargs.setdefault("frameon", False)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)


def plot_coefficients(results, ax=None, alpha=0.05, terms=None, **kwargs):
    """Estimates with ``1 - alpha`` intervals, one panel per term (each on its own scale).

    Multi-level fits with numeric levels draw each term against the level with a shaded band,
    like R's ``plot(summary(rq(...)))``. Fits without standard errors show the estimates only.

    Parameters
    ----------
    results : EstimationResults
    ax : matplotlib Axes, optional
        A subplot whose area is split into the panels; a new figure when None.
    alpha : float
        Level of the intervals.
    terms : list of str, optional
        Terms to draw (default: all, or the first 16 when there are more; the title says so).
    **kwargs
        Passed to ``Axes.errorbar`` (single level) or ``Axes.plot`` (multi-level).

    Returns
    -------
    ndarray of Axes
        One per term, titled with the term.
    """
    frame = results.tidy(alpha=alpha)
    names = list(dict.fromkeys(frame["term"]))
    n_terms = len(names)
    if terms is not None:
        missing = [t for t in terms if t not in names]
        if missing:
            raise ValueError(f"`terms` must be among {names}; got {missing}")
        names = list(terms)
    else:
        names = names[:MAX_PANELS]
    own_figure = ax is None
    axes = panel_axes(len(names), ax)
    has_ci = "conf_low" in frame.columns
    multilevel = "level" in frame.columns
    for panel, term in zip(axes, names, strict=True):
        rows = frame[frame["term"] == term]
        if multilevel:
            levels = rows["level"].to_numpy()
            numeric = all(isinstance(v, int | float) for v in levels)
            x = levels.astype(float) if numeric else np.arange(len(rows))
            (line,) = panel.plot(x, rows["estimate"], marker="o", **kwargs)
            if has_ci:
                panel.fill_between(
                    x, rows["conf_low"], rows["conf_high"], color=line.get_color(), alpha=0.2
                )
            if not numeric:
                panel.set_xticks(x, [format_level(v) for v in levels])
            panel.set_xlabel("level")
        else:
            est = rows["estimate"].to_numpy()
            err = None
            if has_ci:
                err = [est - rows["conf_low"].to_numpy(), rows["conf_high"].to_numpy() - est]
            panel.errorbar([0.0], est, yerr=err, fmt="o", capsize=4, **kwargs)
            panel.set_xticks([])
            panel.set_xlim(-1.0, 1.0)
        if results.null_value is not None:
            low, high = panel.get_ylim()
            if low <= results.null_value <= high:
                panel.axhline(results.null_value, color="grey", lw=0.8, ls="--")
        panel.set_ylabel("estimate")
        panel.set_title(str(term))
    what = f"{100 * (1 - alpha):g}% intervals" if has_ci else "estimates (no standard errors)"
    if terms is None and n_terms > len(names):
        what += f"; first {len(names)} of {n_terms} terms (pass `terms=`)"
    if own_figure:
        axes[0].figure.suptitle(f"{results.method}: {what}")
    return axes


def plot_histogram(draws, ax=None, marker=None, marker_label=None, title=None, **kwargs):
    """Histogram of resampled draws with an optional vertical marker (the observed value)."""
    ax = get_ax(ax)
    kwargs.setdefault("bins", 40)
    kwargs.setdefault("color", "0.7")
    ax.hist(draws, **kwargs)
    if marker is not None:
        ax.axvline(marker, color="C3", lw=1.5, label=marker_label)
        if marker_label:
            ax.legend(frameon=False, loc="best")
    ax.set_xlabel("value")
    ax.set_ylabel("count")
    if title:
        ax.set_title(title)
    return ax


def plot_matrix(
    matrix,
    ax=None,
    *,
    mask=None,
    log10: bool = False,
    xlabel: str = "column",
    ylabel: str = "row",
    label: str = "value",
    title: str | None = None,
    **kwargs,
):
    """A matrix as an image with a labelled colour bar (transport plans, saliency scores).

    Parameters
    ----------
    matrix : array_like, 1-D or 2-D
        Values; a vector is drawn as one row.
    ax : matplotlib Axes, optional
    mask : array_like of bool, optional
        Entries to show; the others are left blank (NaN).
    log10 : bool
        Show ``log10`` of the values (zeros at the smallest positive float).
    xlabel, ylabel, label, title : str
        Axis labels, colour-bar label and title.
    **kwargs
        Passed to ``Axes.imshow`` (``aspect="auto"``, ``interpolation="nearest"`` unless given).
    """
    ax = get_ax(ax)
    values = np.atleast_2d(np.asarray(matrix, dtype=float))
    if log10:
        values = np.log10(np.maximum(values, np.finfo(float).tiny))
    if mask is not None:
        values = np.where(np.atleast_2d(mask), values, np.nan)
    kwargs.setdefault("aspect", "auto")
    kwargs.setdefault("interpolation", "nearest")
    image = ax.imshow(values, **kwargs)
    ax.figure.colorbar(image, ax=ax, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax


__all__ = [
    "MAX_PANELS",
    "get_ax",
    "label_axes",
    "legend_beside",
    "panel_axes",
    "plot_coefficients",
    "plot_histogram",
    "plot_matrix",
    "term_axes",
]
