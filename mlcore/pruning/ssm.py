"""Old home of the Mamba model, now :mod:`mlcore.nn.mamba`; kept for one release."""

import warnings

from mlcore.nn.mamba import (  # noqa: F401 -- the names this module used to define
    SCANS,
    MambaBlock,
    MambaLM,
    mixer_ssm_inputs,
    selective_scan,
    selective_scan_chunked,
)

warnings.warn(
    "mlcore.pruning.ssm is now mlcore.nn.mamba; the old module will be removed in the next release",
    FutureWarning,
    stacklevel=2,
)
