"""Compatibility: optional imports (with their shims) and old spellings kept for one release.

:func:`import_optional` is the one door to an optional dependency (its ImportError names the
extra to install); :func:`renamed_keywords`, :func:`renamed_method`, :func:`renamed_attribute`
and :func:`renamed_names` keep a renamed argument, method, attribute or module-level name
(function, class) working for one release with a ``FutureWarning``.
"""

from __future__ import annotations

import functools
import importlib
import sys
import warnings

import numpy as np


def import_optional(module: str, extra: str):
    """Import ``module`` or raise an ImportError naming the statcore extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this feature needs `{module}`: install it with `pip install statcore[{extra}]`"
        ) from exc


def import_geomstats():
    """Import geomstats (the ``manifold`` extra).

    geomstats 2.8 calls ``numpy.trapz``, which numpy 2.4 removed; it is the same function as
    ``numpy.trapezoid``, so the alias is restored before the import.
    """
    if not hasattr(np, "trapz"):
        setattr(np, "trapz", np.trapezoid)  # noqa: B010 - the alias geomstats 2.8 looks up
    return import_optional("geomstats", "manifold")


def renamed_keywords(**renames: str):
    """Accept a keyword's old spelling for one release, with a ``FutureWarning``.

    ``@renamed_keywords(se="cov_type")`` on a function (or ``__init__``) whose keyword is now
    ``cov_type`` maps ``se=...`` onto it. Passing both spellings is an error. The mapping is kept
    on the wrapper (``_renamed_keywords``) so that :class:`statcore.base.Estimator` can record
    the options under their new names.
    """

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{func.__qualname__}() got both `{new}` and its old spelling `{old}`; "
                        f"pass `{new}` only"
                    )
                warnings.warn(
                    f"{func.__qualname__}(): `{old}=` is now spelled `{new}=`; the old "
                    "spelling will be removed in the next release",
                    FutureWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper._renamed_keywords = {**getattr(func, "_renamed_keywords", {}), **renames}
        return wrapper

    return decorate


def _warn_renamed(owner: str, old: str, new: str, *, sep: str = ".", stacklevel: int = 3) -> None:
    warnings.warn(
        f"{owner}{sep}{old} is now {owner}{sep}{new}; the old name will be removed in the next "
        "release",
        FutureWarning,
        stacklevel=stacklevel,
    )


def renamed_method(cls, old: str, new: str) -> None:
    """Keep ``cls.old`` for one release as an alias of ``cls.new`` that warns ``FutureWarning``."""
    target = getattr(cls, new)

    @functools.wraps(target)
    def alias(self, *args, **kwargs):
        _warn_renamed(cls.__name__, f"{old}()", f"{new}()")
        return getattr(self, new)(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Old name of :meth:`{new}` (warns ``FutureWarning``)."
    setattr(cls, old, alias)


def renamed_attribute(old: str, new: str) -> property:
    """A read-only property ``old`` returning attribute ``new`` with a ``FutureWarning``.

    Use in a class body: ``fit_seconds = renamed_attribute("fit_seconds", "wall_time_s")``.
    """

    def get(self):
        _warn_renamed(type(self).__name__, old, new)
        return getattr(self, new)

    return property(get, doc=f"Old name of ``{new}`` (warns ``FutureWarning``).")


class RenamedKeys(dict):
    """A dict whose old keys, for one release, still read their new keys' values with a
    ``FutureWarning`` (for info mappings handed out by environments and callbacks).

    ``RenamedKeys({"centre_class": 3}, renames={"center_class": "centre_class"})["center_class"]``
    warns and returns 3; the old keys are not stored, so iteration shows the new names only.
    """

    def __init__(self, *args, renames: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self._renames = dict(renames)

    def _new_key(self, key):
        if key in self._renames and not super().__contains__(key):
            _warn_renamed("info", f"[{key!r}]", f"[{self._renames[key]!r}]", sep="", stacklevel=4)
            return self._renames[key]
        return key

    def __getitem__(self, key):
        return super().__getitem__(self._new_key(key))

    def get(self, key, default=None):
        return super().get(self._new_key(key), default)

    def __contains__(self, key):
        return super().__contains__(key) or key in self._renames


def renamed_names(module: str, renames: dict[str, str]):
    """A module ``__getattr__`` serving each old name of ``renames`` as its new one, with a
    ``FutureWarning``, for one release.

    In the module: ``__getattr__ = renamed_names(__name__, {"old_name": "new_name"})``. Python
    calls it only for names the module does not define (PEP 562), so ``from module import
    old_name`` and ``module.old_name`` both warn and return the new object.

    Parameters
    ----------
    module : str
        The module's ``__name__``.
    renames : dict of str to str
        Old name -> new name.

    Returns
    -------
    callable
        The module's ``__getattr__``.
    """

    def __getattr__(name: str):
        if name not in renames:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = renames[name]
        warnings.warn(
            f"{module}.{name} is now {module}.{new}; the old name will be removed in the next "
            "release",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(sys.modules[module], new)

    return __getattr__


__all__ = [
    "import_geomstats",
    "import_optional",
    "RenamedKeys",
    "renamed_attribute",
    "renamed_keywords",
    "renamed_method",
    "renamed_names",
]
