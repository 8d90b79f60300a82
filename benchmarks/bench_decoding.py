"""Disagreement-guided token intervention: decoding with KV caches against re-reading the prefix.

Both sides run ``mlcore.decoding.intervene_generate`` on the same pair of small GPT-2 models
(built from a config, random weights: the speed does not depend on them) and produce the same
tokens; the anchor recomputes the whole prefix at every step (``use_cache=False``).
"""

import torch

from mlcore.decoding import intervene_generate

try:
    import transformers
except ImportError:  # the `hf` extra is not installed: no case to time
    transformers = None

CASES = []

if transformers is not None:

    def _gpt2(seed):
        torch.manual_seed(seed)
        config = transformers.GPT2Config(
            vocab_size=512,
            n_positions=512,
            n_embd=128,
            n_layer=4,
            n_head=4,
            bos_token_id=0,
            eos_token_id=0,
        )
        return transformers.GPT2LMHeadModel(config).eval()

    base, reasoner = _gpt2(0), _gpt2(1)
    prompts = torch.randint(0, 512, (4, 32), generator=torch.Generator().manual_seed(0))
    options = {"budget": 8, "threshold": 0.05, "max_new_tokens": 128}

    CASES.append(
        {
            "name": "intervene_generate_gpt2_4x32+128",
            "ours": lambda: intervene_generate(base, reasoner, prompts, **options),
            "anchor": lambda: intervene_generate(
                base, reasoner, prompts, use_cache=False, **options
            ),
            "anchor_name": f"no KV cache (transformers {transformers.__version__})",
            "repeat": 3,
        }
    )
