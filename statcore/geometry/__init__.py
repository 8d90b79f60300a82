"""Geometry of representations: local and global intrinsic dimension, representational
alignment between models and with a target (brain responses), the study that relates
them to generalisation, and kNN (KSG) mutual information with its ground-truth designs.

References
----------
Yu, Ma, Wei, Zhang, Deng, Deng and Liu (2026). Local intrinsic dimension of representations
predicts alignment and generalization in AI models and human brain. arXiv:2601.22722.
Huh, M., Cheung, B., Wang, T. and Isola, P. (2024). The platonic representation hypothesis.
*ICML 2024*.
Kraskov, A., Stögbauer, H. and Grassberger, P. (2004). Estimating mutual information.
*Phys. Rev. E* 69, 066138.
"""

from statcore.geometry.alignment import AlignmentStudy, AlignmentStudyResults, alignment
from statcore.geometry.lid import (
    GlobalID,
    GlobalIDResults,
    LocalID,
    LocalIDResults,
    twonn_dimension,
)
from statcore.geometry.mi_designs import (
    correlated_bernoulli_mi,
    correlated_bernoulli_sample,
    crossed_mixture_mi,
    crossed_mixture_sample,
    gaussian_copula_mi,
    gaussian_copula_sample,
    shared_poisson_mi,
    shared_poisson_sample,
    squared_noise_mi,
    squared_noise_sample,
    student_t_mi,
    student_t_sample,
)
from statcore.geometry.mutual_information import (
    MutualInformationResult,
    ksg_independence_test,
    ksg_mutual_information,
)

__all__ = [
    "AlignmentStudy",
    "AlignmentStudyResults",
    "GlobalID",
    "GlobalIDResults",
    "LocalID",
    "LocalIDResults",
    "MutualInformationResult",
    "alignment",
    "correlated_bernoulli_mi",
    "correlated_bernoulli_sample",
    "crossed_mixture_mi",
    "crossed_mixture_sample",
    "gaussian_copula_mi",
    "gaussian_copula_sample",
    "ksg_independence_test",
    "ksg_mutual_information",
    "shared_poisson_mi",
    "shared_poisson_sample",
    "squared_noise_mi",
    "squared_noise_sample",
    "student_t_mi",
    "student_t_sample",
    "twonn_dimension",
]
