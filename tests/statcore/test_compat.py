import subprocess
import sys

import pytest

from statcore.compat import import_geomstats, import_optional


def test_geomstats_imports_through_the_shim():
    gs = import_geomstats()
    sphere = gs.geometry.hypersphere.Hypersphere(dim=2)
    assert sphere.dim == 2


def test_missing_optional_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install statcore\[dist\]"):
        import_optional("a_module_that_is_not_installed", "dist")


def test_statcore_import_does_not_pull_heavy_dependencies():
    code = (
        "import sys, statcore, statcore.results; "
        "print(sorted(m for m in ('torch', 'numba', 'formulaic', 'matplotlib', 'dask') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
