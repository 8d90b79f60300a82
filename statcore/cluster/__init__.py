"""Clustering: shared geometry kernels, hardness fingerprints, size-constrained clustering."""
