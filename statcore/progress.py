"""Progress bars: the one door to tqdm, behind every ``progress=`` argument of statcore and mlcore.

tqdm is imported only when a bar is shown, and ``tqdm.auto`` picks the notebook widget in Jupyter
and the text bar elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from statcore.validation import check_bool


class _NoBar:
    """What :func:`progress` returns when no bar is wanted: the same calls, doing nothing."""

    def __init__(self, iterable: Iterable | None):
        self._iterable = iterable

    def __iter__(self):
        return iter(self._iterable)

    def update(self, n: int = 1) -> None:
        """Advance by ``n`` (nothing to draw)."""

    def set_postfix(self, *args, **kwargs) -> None:
        """Show values beside the bar (nothing to draw)."""

    def close(self) -> None:
        """Remove the bar (nothing to remove)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def progress(iterable_or_total: Iterable | int, *, enabled: bool = True, desc: str | None = None):
    """A progress bar over an iterable, or one advanced by hand up to a total.

    Parameters
    ----------
    iterable_or_total : iterable or int
        Items to iterate over (the bar advances per item), or the number of steps the caller will
        count with ``bar.update()``.
    enabled : bool
        ``False`` returns a bar that draws nothing and costs nothing (tqdm is not imported).
    desc : str, optional
        The bar's label, usually the procedure's public name.

    Returns
    -------
    tqdm or a silent stand-in
        Iterable when given an iterable; a context manager with ``update``, ``set_postfix`` and
        ``close`` either way.
    """
    # the user's `progress=` argument arrives here as `enabled`
    check_bool(enabled, name="progress")
    iterable, total = (
        (None, int(iterable_or_total))
        if isinstance(iterable_or_total, int)
        else (iterable_or_total, None)
    )
    if not enabled:
        return _NoBar(iterable)
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc)


__all__ = [
    "progress",
]
