"""``import mlcore`` without torch: an ImportError that names the extra to install."""

import subprocess
import sys

import mlcore

SHIM = """
import sys
sys.modules["torch"] = None  # makes `import torch` raise ImportError
try:
    import mlcore
except ImportError as exc:
    print(type(exc).__name__)
    print(str(exc))
    print(type(exc.__cause__).__name__)
else:
    print("imported")
"""


def test_import_without_torch_names_the_extra():
    out = subprocess.run(
        [sys.executable, "-c", SHIM], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out[0] == "ImportError"
    assert "pip install statcore[ml]" in out[1]
    assert out[2] in ("ImportError", "ModuleNotFoundError")  # the original error is chained


def test_public_names_and_version():
    import statcore

    assert mlcore.__version__ == statcore.__version__
    for name in ("get_device", "seed_everything", "TrainingResult", "EvaluationResult"):
        assert name in mlcore.__all__
        assert callable(getattr(mlcore, name))
