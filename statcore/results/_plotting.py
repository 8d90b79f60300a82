"""Lazy matplotlib: ``statcore.results`` never imports it until a plot is asked for."""

from __future__ import annotations


def get_ax(ax=None):
    """Return ``ax``, or a fresh Axes on a new figure when it is None."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new_ax = plt.subplots(figsize=(6.4, 4.0))
    return new_ax


def plot_coefficients(results, ax=None, alpha=0.05, **kwargs):
    """Point estimates with ``1 - alpha`` intervals, one row per term (one panel line per level).

    Multi-level fits with numeric levels draw each term against the level with a shaded band,
    like R's ``plot(summary(rq(...)))``.
    """
    ax = get_ax(ax)
    frame = results.tidy(alpha=alpha)
    if "level" in frame.columns:
        levels = frame["level"].to_numpy()
        numeric = all(isinstance(v, int | float) for v in levels)
        for term, rows in frame.groupby("term", sort=False):
            x = rows["level"].to_numpy(dtype=float) if numeric else range(len(rows))
            (line,) = ax.plot(x, rows["estimate"], marker="o", label=term, **kwargs)
            ax.fill_between(
                x, rows["conf_low"], rows["conf_high"], color=line.get_color(), alpha=0.2
            )
        ax.set_xlabel("level")
        ax.legend(frameon=False)
    else:
        y = range(len(frame))[::-1]
        err = [frame["estimate"] - frame["conf_low"], frame["conf_high"] - frame["estimate"]]
        ax.errorbar(frame["estimate"], y, xerr=err, fmt="o", capsize=3, **kwargs)
        ax.set_yticks(list(y), frame["term"])
        if results.null_value is not None:
            ax.axvline(results.null_value, color="grey", lw=0.8, ls="--")
    ax.set_ylabel("estimate" if "level" in frame.columns else "")
    ax.set_title(f"{results.method}: {100 * (1 - alpha):g}% intervals")
    return ax


def plot_histogram(draws, ax=None, marker=None, marker_label=None, title=None, **kwargs):
    """Histogram of resampled draws with an optional vertical marker (the observed value)."""
    ax = get_ax(ax)
    kwargs.setdefault("bins", 40)
    kwargs.setdefault("color", "0.7")
    ax.hist(draws, **kwargs)
    if marker is not None:
        ax.axvline(marker, color="C3", lw=1.5, label=marker_label)
        if marker_label:
            ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    return ax
