"""Geometry of representations: local and global intrinsic dimension, representational
alignment between models and with a target (brain responses), and the study that relates
them to generalisation.

References
----------
Yu, Ma, Wei, Zhang, Deng, Deng and Liu (2026). Local intrinsic dimension of representations
predicts alignment and generalization in AI models and human brain. arXiv:2601.22722.
Huh, M., Cheung, B., Wang, T. and Isola, P. (2024). The platonic representation hypothesis.
*ICML 2024*.
"""

from statcore.geometry.alignment import AlignmentStudy, AlignmentStudyResults, alignment
from statcore.geometry.lid import (
    GlobalID,
    GlobalIDResults,
    LocalID,
    LocalIDResults,
    twonn_dimension,
)

__all__ = [
    "AlignmentStudy",
    "AlignmentStudyResults",
    "GlobalID",
    "GlobalIDResults",
    "LocalID",
    "LocalIDResults",
    "alignment",
    "twonn_dimension",
]
