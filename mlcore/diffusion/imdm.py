"""IMDM: masked diffusion with a stochastic, infinite-state mask (MDLM as the special case).

Fidelity: paper, from the authors' code (Ugness/IMDM: ``models/dit.py::EmbeddingLayer``, the
ELBO in ``algo.py``, the ``_compute_posterior`` sampler, IM-SDTT / IM-ReDi distillation); the
paper's body was not read. The MDLM SUBS loss, the zero-initialised noise MLP and the three-way
posterior (unmask / keep the noise / redraw it) follow that code. Not reproduced: the OWT / LM1B
experiments (checkpoints and data need the network); the synthetic task in ``synthetic.py`` is a
CPU stand-in.
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from mlcore._checks import check_float_dtype, check_tensor, check_token_ids
from mlcore._device import torch_generator
from mlcore.functional import check_times, masked_diffusion_loss
from statcore.compat import renamed_keywords
from statcore.validation import check_option, check_positive, check_positive_int, check_scalar

NOISE_TYPES = ("uniform", "randn")
POSTERIORS = ("imdm", "mdlm")


class InfiniteMaskEmbedding(nn.Module):
    r"""Token embedding whose mask token carries a per-position random vector: IMDM's mask.

    A masked position gets :math:`e_{[M]} + g_\phi(\varepsilon_i)` instead of the single
    vector :math:`e_{[M]}`, with :math:`\varepsilon_i` drawn per position
    (``uniform``: :math:`U[-1, 1]^{D_\varepsilon}`, ``randn``: standard normal, times
    ``noise_scale``) and :math:`g_\phi` = Linear(D_ε, 4d) → GELU → Linear(4d, d, no bias). The
    last layer is zero-initialised, so at initialisation the embedding *is* the base (MDLM)
    embedding for every ε: IMDM inherits a pretrained masked-diffusion model. Unmasked positions
    never see ε.

    Parameters
    ----------
    base_embedding : nn.Embedding
        The masked-diffusion model's token embedding, mask token included.
    mask_id : int
        The mask token's id in ``base_embedding``.
    noise_dim : int
        :math:`D_\varepsilon`.
    noise_type : {"uniform", "randn"}
    noise_scale : float
    as_mdlm : bool
        Ignore ε (plain MDLM with the same weights).
    device, dtype
        Factory keywords for :math:`g_\phi`.

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026* (code Ugness/IMDM,
    ``models/dit.py::EmbeddingLayer``).
    """

    def __init__(
        self,
        base_embedding: nn.Embedding,
        mask_id: int,
        noise_dim: int = 16,
        noise_type: str = "uniform",
        noise_scale: float = 1.0,
        *,
        as_mdlm: bool = False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if not isinstance(base_embedding, nn.Embedding):
            raise TypeError(
                f"`base_embedding` must be an nn.Embedding; got {type(base_embedding).__name__}"
            )
        self.mask_id = check_scalar(
            mask_id,
            name="mask_id",
            kind=numbers.Integral,
            low=0,
            high=base_embedding.num_embeddings - 1,
        )
        self.noise_dim = check_positive_int(noise_dim, name="noise_dim")
        self.noise_type = check_option(noise_type, name="noise_type", options=NOISE_TYPES)
        self.noise_scale = check_positive(noise_scale, name="noise_scale")
        self.as_mdlm = bool(as_mdlm)
        self.base = base_embedding
        d = base_embedding.embedding_dim
        factory = {"device": device, "dtype": check_float_dtype(dtype)}
        self.noise_net = nn.Sequential(
            nn.Linear(self.noise_dim, 4 * d, **factory),
            nn.GELU(),
            nn.Linear(4 * d, d, bias=False, **factory),
        )
        nn.init.zeros_(self.noise_net[2].weight)

    @renamed_keywords(generator="random_state")
    def sample_noise(self, batch: int, length: int, *, random_state=None, device=None, dtype=None):
        """Draw ε of shape (batch, length, noise_dim).

        ``random_state``: None (fresh entropy), an int seed, a numpy or a torch.Generator.
        """
        batch = check_positive_int(batch, name="batch")
        length = check_positive_int(length, name="length")
        device = device if device is not None else self.base.weight.device
        dtype = check_float_dtype(dtype) or self.base.weight.dtype
        shape = (batch, length, self.noise_dim)
        generator = torch_generator(random_state, device)
        if self.noise_type == "uniform":
            eps = torch.rand(shape, generator=generator, device=device, dtype=dtype) * 2 - 1
        else:
            eps = torch.randn(shape, generator=generator, device=device, dtype=dtype)
        return eps * self.noise_scale

    @renamed_keywords(generator="random_state")
    def forward(self, ids: torch.Tensor, eps: torch.Tensor | None = None, *, random_state=None):
        """Embed ``ids`` (batch, length); returns ``(embeddings, eps)`` (ε drawn when None).

        ``random_state`` (None, int or torch.Generator) is the source of a drawn ε; it is
        checked even when ``eps`` is given.
        """
        check_token_ids(ids, name="ids", vocab=self.base.num_embeddings)
        generator = torch_generator(random_state, ids.device)
        if eps is None:
            eps = self.sample_noise(*ids.shape, random_state=generator, device=ids.device)
        else:
            batch, length = ids.shape
            check_tensor(
                eps,
                name="eps",
                dims=("batch", "length", "noise_dim"),
                sizes={"batch": batch, "length": length, "noise_dim": self.noise_dim},
                kind="floating",
            )
        emb = self.base(ids)
        if self.as_mdlm:
            return emb, eps
        masked = (ids == self.mask_id).unsqueeze(-1).to(emb.dtype)
        return emb + masked * self.noise_net(eps.to(emb.dtype)), eps

    def extra_repr(self) -> str:
        return (
            f"mask_id={self.mask_id}, noise_dim={self.noise_dim}, "
            f"noise_type={self.noise_type!r}, noise_scale={self.noise_scale:g}, "
            f"as_mdlm={self.as_mdlm}"
        )


def _mask_embedding(denoiser) -> InfiniteMaskEmbedding:
    emb = getattr(denoiser, "embedding", None)
    if not isinstance(emb, InfiniteMaskEmbedding):
        raise TypeError(
            "the denoiser must expose its InfiniteMaskEmbedding as `.embedding` and map "
            f"(x_t, eps) to logits; {type(denoiser).__name__} has no such attribute"
        )
    return emb


@renamed_keywords(generator="random_state")
def imdm_elbo_loss(
    denoiser,
    x0: torch.Tensor,
    *,
    eps=None,
    t=None,
    t_min: float = 1e-3,
    random_state=None,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""IMDM's (= MDLM's) continuous-time negative ELBO on clean sequences ``x0``.

    Draws :math:`t \sim U[t_{min}, 1]` per sequence (unless given), masks each token with
    probability :math:`1 - \alpha_t = t`, draws ε (unless given), and scores the denoiser's
    logits with :func:`mlcore.functional.masked_diffusion_loss`. ε is independent of
    :math:`(x_0, x_t)` here, so the ELBO-optimal denoiser ignores ε: IMDM trained on the ELBO
    alone is MDLM. Passing the ε of teacher couplings (and ``t=1`` for one-step students) is
    how the distillation stage uses it (:func:`~mlcore.diffusion.distill_on_couplings`).

    Parameters
    ----------
    denoiser : nn.Module
        ``denoiser(x_t, eps) -> logits`` (batch, length, vocab) with ``.embedding`` an
        :class:`InfiniteMaskEmbedding`.
    x0 : Tensor (batch, length) of token ids
    eps : Tensor (batch, length, noise_dim), optional
    t : float or Tensor (batch,), optional
        Diffusion times in (0, 1]: the ELBO's domain (t = 0 is clean data, where the 1/t
        weight is infinite; t = 1 is fully masked).
    t_min : float
        Smallest sampled time (the 1/t weight is unbounded at 0).
    random_state : None, int, numpy Generator or torch.Generator
        Source of the times, the masks and a drawn ε (None: fresh entropy).
    reduction : {"mean", "sum", "none"}

    Raises
    ------
    ValueError
        For an empty ``x0``, ids outside the embedding or equal to the mask id, or ``t``
        outside (0, 1].

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026*.
    Sahoo, S. S. et al. (2024). Simple and effective masked diffusion language models.
    *NeurIPS 2024*.
    """
    embedding = _mask_embedding(denoiser)
    mask_id = embedding.mask_id
    check_tensor(x0, name="x0", dims=("batch", "length"), nonempty=True)
    check_token_ids(x0, name="x0", vocab=embedding.base.num_embeddings)
    if (x0 == mask_id).any():
        raise ValueError(f"`x0` must be clean data; it contains the mask id {mask_id}")
    t_min = check_scalar(t_min, name="t_min", low=0.0, high=1.0, low_inclusive=False)
    batch = x0.shape[0]
    generator = torch_generator(random_state, x0.device)
    if t is None:
        t = t_min + (1 - t_min) * torch.rand(batch, generator=generator, device=x0.device)
    elif isinstance(t, torch.Tensor):
        if t.ndim > 1 or (t.ndim == 1 and t.shape[0] not in (1, batch)):
            raise ValueError(
                f"`t` must be a number or a (batch,) = ({batch},) tensor; got shape "
                f"{tuple(t.shape)}"
            )
        check_tensor(t, name="t", kind="real")
        t = check_times(t.to(device=x0.device, dtype=torch.float32).expand(batch), name="t")
    else:
        t = check_scalar(t, name="t", low=0.0, high=1.0, low_inclusive=False)
        t = torch.full((batch,), t, dtype=torch.float32, device=x0.device)
    masked = torch.rand(x0.shape, generator=generator, device=x0.device) < t.unsqueeze(1)
    xt = torch.where(masked, torch.full_like(x0, mask_id), x0)
    if eps is None:  # from the loss's own stream, so that a seeded loss is reproducible
        eps = embedding.sample_noise(*x0.shape, random_state=generator, device=x0.device)
    logits = denoiser(xt, eps)
    return masked_diffusion_loss(logits, x0, masked, t, reduction=reduction)


def transition_probabilities(t: float, s: float, *, posterior: str = "imdm", reset: bool = True):
    r"""Per-masked-token outcome probabilities from time ``t`` to ``s < t`` (log-linear α).

    With :math:`\alpha = 1 - t`, :math:`\alpha_{ts} = \alpha_t / \alpha_s`, each divided by
    :math:`1 - \alpha_t`: unmask :math:`\alpha_s - \alpha_t`; stay masked with the same ε
    :math:`\alpha_{ts} - \alpha_t`; stay masked with a fresh ε ("reset")
    :math:`(1 - \alpha_{ts})(1 - \alpha_s)`. The two stay-masked terms sum to MDLM's
    :math:`(1-\alpha_s)/(1-\alpha_t)`; with ``reset=False`` or ``posterior="mdlm"`` all of
    it keeps the same ε.

    Returns
    -------
    dict with ``unmask``, ``same``, ``reset`` (floats summing to 1).
    """
    t = check_scalar(t, name="t", low=0.0, high=1.0, low_inclusive=False)
    s = check_scalar(s, name="s", low=0.0, high=t, high_inclusive=False)
    check_option(posterior, name="posterior", options=POSTERIORS)
    a_t, a_s = 1.0 - t, 1.0 - s
    unmask = (a_s - a_t) / (1 - a_t)
    if posterior == "mdlm" or not reset or a_s == 0:
        return {"unmask": unmask, "same": 1.0 - unmask, "reset": 0.0}
    a_ts = a_t / a_s
    same = (a_ts - a_t) / (1 - a_t)
    return {"unmask": unmask, "same": same, "reset": (1 - a_ts) * (1 - a_s) / (1 - a_t)}


class IMDMSampler:
    """Ancestral sampler of IMDM (and MDLM): persistent per-position ε and a reset channel.

    ``steps`` uniform steps from t = 1 (all masked) to t = 0. At each step a masked position
    unmasks (its token drawn from the denoiser's softmax, or its argmax with ``greedy``), stays
    masked with the same ε, or stays masked with a fresh ε, with the probabilities of
    :func:`transition_probabilities`. ε persists across steps (``persistent_eps``); with
    ``persistent_eps=False`` every step draws new ε everywhere.

    Parameters
    ----------
    denoiser : nn.Module
        ``denoiser(x_t, eps) -> logits`` with ``.embedding`` an :class:`InfiniteMaskEmbedding`.
    steps : int
    posterior : {"imdm", "mdlm"}
        ``"mdlm"``: MDLM's posterior (no reset channel).
    persistent_eps, reset, greedy : bool

    Attributes
    ----------
    unmask_counts : list of int
        Positions unmasked at each step of the last :meth:`sample` call.

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026* (code Ugness/IMDM,
    ``algo.py::_compute_posterior``).
    """

    def __init__(
        self,
        denoiser,
        steps: int,
        *,
        posterior: str = "imdm",
        persistent_eps: bool = True,
        reset: bool = True,
        greedy: bool = False,
    ):
        self.embedding = _mask_embedding(denoiser)
        self.denoiser = denoiser
        self.steps = check_positive_int(steps, name="steps")
        self.posterior = check_option(posterior, name="posterior", options=POSTERIORS)
        self.persistent_eps = bool(persistent_eps)
        self.reset = bool(reset)
        self.greedy = bool(greedy)
        self.unmask_counts = []

    @renamed_keywords(generator="random_state")
    @torch.no_grad()
    def sample(self, n: int, length: int, *, eps=None, random_state=None, device=None):
        """Draw ``n`` sequences of ``length`` tokens (int64 (n, length)).

        ``eps``: the initial ε (n, length, noise_dim); drawn when None. ``random_state``
        (None, int or torch.Generator) drives every draw of the run.
        """
        n = check_positive_int(n, name="n")
        length = check_positive_int(length, name="length")
        emb = self.embedding
        device = device if device is not None else emb.base.weight.device
        generator = torch_generator(random_state, device)
        if eps is None:
            eps = emb.sample_noise(n, length, random_state=generator, device=device)
        else:
            # a NaN in ε would surface steps later as torch.multinomial's "invalid probability"
            check_tensor(
                eps,
                name="eps",
                dims=("n", "length", "noise_dim"),
                sizes={"n": n, "length": length, "noise_dim": emb.noise_dim},
                kind="floating",
                finite=True,
            )
        x = torch.full((n, length), emb.mask_id, dtype=torch.long, device=device)
        self.unmask_counts = []
        for k in range(self.steps, 0, -1):
            t, s = k / self.steps, (k - 1) / self.steps
            if not self.persistent_eps:
                eps = emb.sample_noise(n, length, random_state=generator, device=device)
            probs = torch.softmax(self.denoiser(x, eps).double(), dim=-1)
            if self.greedy:
                tokens = probs.argmax(-1)
            else:
                flat = torch.multinomial(probs.reshape(-1, probs.shape[-1]), 1, generator=generator)
                tokens = flat.view(n, length)
            p = transition_probabilities(t, s, posterior=self.posterior, reset=self.reset)
            u = torch.rand((n, length), generator=generator, device=device, dtype=torch.float64)
            masked = x == emb.mask_id
            unmask = masked & (u < p["unmask"])
            resets = masked & (u >= p["unmask"] + p["same"])
            x = torch.where(unmask, tokens, x)
            if resets.any():
                fresh = emb.sample_noise(n, length, random_state=generator, device=device)
                eps = torch.where(resets.unsqueeze(-1), fresh, eps)
            self.unmask_counts.append(int(unmask.sum()))
        return x

    def __repr__(self) -> str:
        return (
            f"IMDMSampler(steps={self.steps}, posterior={self.posterior!r}, "
            f"persistent_eps={self.persistent_eps}, reset={self.reset}, greedy={self.greedy})"
        )
