"""Mutual information: the amortised InfoAtlas estimator and the estimators it is measured
against (KSG, MINE, InfoNCE, SMILE), behind ``mutual_information`` and ``independence_test``.

References
----------
Hu, Chen, ..., Yang (2026). InfoAtlas: amortised mutual information estimation in one forward
pass. arXiv:2606.00241.
"""

from mlcore.mi.api import METHODS, independence_test, mutual_information
from mlcore.mi.critics import critic_independence_test, critic_mutual_information
from mlcore.mi.infoatlas import InfoAtlas, InfoAtlasNet, dv_readout, gaussian_log_ratio

__all__ = [
    "METHODS",
    "InfoAtlas",
    "InfoAtlasNet",
    "critic_independence_test",
    "critic_mutual_information",
    "dv_readout",
    "gaussian_log_ratio",
    "independence_test",
    "mutual_information",
]
