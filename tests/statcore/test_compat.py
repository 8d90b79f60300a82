import subprocess
import sys

import pytest

from statcore.compat import import_geomstats, import_optional, renamed_names


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


def test_renamed_names_serves_old_names_with_a_future_warning():
    import types

    module = types.ModuleType("statcore_fake_module")
    module.new_name = object()
    module.__getattr__ = renamed_names("statcore_fake_module", {"old_name": "new_name"})
    sys.modules["statcore_fake_module"] = module
    try:
        with pytest.warns(FutureWarning, match="old_name is now statcore_fake_module.new_name"):
            assert module.old_name is module.new_name
        with pytest.raises(AttributeError, match="no attribute 'other'"):
            module.other  # noqa: B018
    finally:
        del sys.modules["statcore_fake_module"]
