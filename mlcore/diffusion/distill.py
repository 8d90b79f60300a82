"""IMDM's distillation stage: rectified (ε, x0) couplings and a student fitted on them."""

from __future__ import annotations

import time

import torch

from mlcore._checks import check_tensor, check_token_ids
from mlcore._device import torch_generator
from mlcore._iterations import budget_result
from mlcore.diffusion.imdm import IMDMSampler, _mask_embedding, imdm_elbo_loss
from mlcore.results import TrainingResult
from statcore.compat import renamed_keywords
from statcore.progress import progress as progress_bar
from statcore.validation import check_positive, check_positive_int, check_scalar


@renamed_keywords(generator="random_state")
@torch.no_grad()
def rectified_couplings(teacher: IMDMSampler, n: int, length: int, *, random_state=None):
    """Pairs (ε, x0): the initial mask noise and the sample a multi-step teacher drew from it.

    The coupling is what rectification distils: the student learns to map each ε straight
    to "its" teacher sample. Noise and samples follow the teacher's device.

    Parameters
    ----------
    teacher : IMDMSampler
        A multi-step sampler (persistent ε).
    n, length : int
    random_state : None, int or torch.Generator
        Source of the noise and of the teacher's draws (None: fresh entropy).

    Returns
    -------
    (eps, x0)
        (n, length, noise_dim) noise and (n, length) samples.

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026* (IM-ReDi).
    Yoo, J. et al. ReDi: rectified discrete flow (code Ugness/ReDi).
    """
    if not isinstance(teacher, IMDMSampler):
        raise TypeError(f"`teacher` must be an IMDMSampler; got {type(teacher).__name__}")
    n = check_positive_int(n, name="n")
    length = check_positive_int(length, name="length")
    generator = torch_generator(random_state, teacher.embedding.base.weight.device)
    eps = teacher.embedding.sample_noise(n, length, random_state=generator)
    return eps, teacher.sample(n, length, eps=eps, random_state=generator)


@renamed_keywords(generator="random_state")
def distill_on_couplings(
    student,
    eps,
    x0,
    *,
    steps: int = 2000,
    lr: float = 1e-3,
    batch_size: int = 256,
    t=1.0,
    log_every: int = 100,
    random_state=None,
    progress: bool = False,
) -> TrainingResult:
    """Fit a student on fixed couplings with the IMDM ELBO, each x0 masked with its own ε.

    ``t=1.0`` (default) trains the one-step map from the all-masked sequence and ε to x0;
    ``t=None`` samples the diffusion time as in pre-training (a multi-step student). The
    student is trained in place with Adam.

    Parameters
    ----------
    student : nn.Module
        An IMDM denoiser (typically initialised from the teacher's weights).
    eps, x0 : Tensor
        Couplings from :func:`rectified_couplings`.
    steps, batch_size, log_every : int
    lr : float
    t : float in (0, 1] or None
    random_state : None, int or torch.Generator
        Source of the mini-batches and masks (None: fresh entropy).
    progress : bool
        Show a progress bar over the steps.

    Returns
    -------
    TrainingResult
        ``loss`` per logged step; ``iterations`` records the run (converged when every step
        ran with a finite loss, "diverged" when the logged loss became infinite or NaN).

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026*.
    """
    embedding = _mask_embedding(student)
    steps = check_positive_int(steps, name="steps")
    batch_size = check_positive_int(batch_size, name="batch_size")
    log_every = check_positive_int(log_every, name="log_every")
    lr = check_positive(lr, name="lr")
    if t is not None:
        t = check_scalar(t, name="t", low=0.0, high=1.0, low_inclusive=False)
    check_tensor(eps, name="eps", ndim=3, kind="floating", nonempty=True, finite=True)
    check_tensor(x0, name="x0", ndim=2, kind="integer")
    if eps.shape[:2] != x0.shape or eps.shape[2] != embedding.noise_dim:
        raise ValueError(
            "`eps` (n, length, noise_dim) and `x0` (n, length) must be couplings of one shape, "
            f"with noise_dim={embedding.noise_dim}; got {tuple(eps.shape)} and {tuple(x0.shape)}"
        )
    if eps.device != x0.device:
        raise ValueError(f"`eps` and `x0` must share a device; got {eps.device} and {x0.device}")
    check_token_ids(x0, name="x0", vocab=embedding.base.num_embeddings)
    if (x0 == embedding.mask_id).any():
        raise ValueError(f"`x0` must be clean data; it contains the mask id {embedding.mask_id}")
    generator = torch_generator(random_state, x0.device)
    opt = torch.optim.Adam(student.parameters(), lr=lr)
    records, start = [], time.perf_counter()
    student.train()
    for step in progress_bar(range(1, steps + 1), enabled=progress, desc="distill_on_couplings"):
        idx = torch.randint(
            0, x0.shape[0], (min(batch_size, x0.shape[0]),), generator=generator, device=x0.device
        )
        loss = imdm_elbo_loss(student, x0[idx], eps=eps[idx], t=t, random_state=generator)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % log_every == 0 or step == steps:
            records.append({"step": step, "loss": loss.detach()})
    return budget_result(
        records,
        method="IMDM distillation on rectified couplings",
        nobs=int(x0.shape[0]),
        wall_time_s=time.perf_counter() - start,
        device=x0.device,
        function="distill_on_couplings",
        n_iter=steps,
        maxiter=steps,
        criterion=f"training loss after a fixed budget of {steps} steps",
        remedy="lower `lr` or check the couplings",
    )
