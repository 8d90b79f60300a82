"""A tiny bidirectional denoiser for short sequences, built on the infinite mask embedding."""

from __future__ import annotations

from torch import nn

from mlcore._checks import check_float_dtype, check_tensor, check_token_ids
from mlcore.diffusion.imdm import InfiniteMaskEmbedding
from statcore.validation import check_positive_int


class TinyDenoiser(nn.Module):
    """An MLP denoiser over a whole short sequence: ``(x_t, eps) -> logits``.

    Embeds the ``length`` tokens with an :class:`InfiniteMaskEmbedding` (vocabulary ``vocab``
    plus the mask token ``vocab``), concatenates them and maps them with a two-hidden-layer
    GELU MLP to (length, vocab) logits over the data tokens. Every output sees every input
    (bidirectional), as a masked-diffusion denoiser must.

    Parameters
    ----------
    vocab, length : int
        Data tokens and sequence length.
    d_model, hidden : int
        Embedding width and MLP width.
    noise_dim : int
    noise_type : {"uniform", "randn"}
    as_mdlm : bool
        Ignore ε (MDLM).
    device, dtype
        Factory keywords.

    References
    ----------
    Infinite Mask Diffusion Model (IMDM). arXiv:2605.10518, *ICML 2026*.
    """

    def __init__(
        self,
        vocab: int,
        length: int,
        d_model: int = 32,
        hidden: int = 256,
        noise_dim: int = 16,
        noise_type: str = "uniform",
        *,
        as_mdlm: bool = False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        factory = {"device": device, "dtype": check_float_dtype(dtype)}
        self.vocab = check_positive_int(vocab, name="vocab", minimum=2)
        self.length = check_positive_int(length, name="length")
        d_model = check_positive_int(d_model, name="d_model")
        hidden = check_positive_int(hidden, name="hidden")
        self.embedding = InfiniteMaskEmbedding(
            nn.Embedding(vocab + 1, d_model, **factory),
            mask_id=vocab,
            noise_dim=noise_dim,
            noise_type=noise_type,
            as_mdlm=as_mdlm,
            **factory,
        )
        self.net = nn.Sequential(
            nn.Linear(length * d_model, hidden, **factory),
            nn.GELU(),
            nn.Linear(hidden, hidden, **factory),
            nn.GELU(),
            nn.Linear(hidden, length * vocab, **factory),
        )

    def forward(self, xt, eps=None):
        # the data tokens and the mask token (id vocab)
        check_tensor(xt, name="xt", dims=("batch", "length"), sizes={"length": self.length})
        check_token_ids(xt, name="xt", vocab=self.vocab + 1)
        emb, _ = self.embedding(xt, eps)
        return self.net(emb.flatten(1)).view(xt.shape[0], self.length, self.vocab)

    def extra_repr(self) -> str:
        return f"vocab={self.vocab}, length={self.length}"
