"""The one door to torch randomness: generators from any ``random_state``, global state untouched."""

import numpy as np
import pytest
import torch

from mlcore._device import seeded_torch, torch_generator, torch_global_seed, torch_seed


@pytest.mark.parametrize("random_state", [None, 7, np.random.default_rng(7)])
def test_torch_generator_never_reads_or_changes_the_global_state(random_state):
    before = torch.random.get_rng_state()
    generator = torch_generator(random_state)
    torch.rand(3, generator=generator)
    assert isinstance(generator, torch.Generator)
    assert torch.equal(before, torch.random.get_rng_state())


def test_same_int_or_same_numpy_seed_gives_the_same_draws():
    assert torch.equal(
        torch.rand(4, generator=torch_generator(3)), torch.rand(4, generator=torch_generator(3))
    )
    a = torch.rand(4, generator=torch_generator(np.random.default_rng(3)))
    b = torch.rand(4, generator=torch_generator(np.random.default_rng(3)))
    assert torch.equal(a, b)


def test_a_numpy_stream_moves_on_between_calls():
    # two generators seeded from one stream must differ, or every expert of a study would share
    # its weights
    rng = np.random.default_rng(0)
    assert torch_seed(rng) != torch_seed(rng)


def test_a_torch_generator_passed_in_is_continued_not_copied():
    generator = torch.Generator().manual_seed(0)
    assert torch_generator(generator) is generator


def test_seeded_torch_seeds_module_initialisation_and_restores_the_global_state():
    before = torch.random.get_rng_state()
    with seeded_torch(5):
        first = torch.nn.Linear(3, 2).weight.detach().clone()
    with seeded_torch(5):
        second = torch.nn.Linear(3, 2).weight.detach().clone()
    with seeded_torch(6):
        other = torch.nn.Linear(3, 2).weight.detach().clone()
    assert torch.equal(first, second)
    assert not torch.equal(first, other)
    assert torch.equal(before, torch.random.get_rng_state())


def test_torch_global_seed_is_manual_seed_inside_and_restores_outside():
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    with torch_global_seed(3) as seed:
        inside = torch.rand(2)
    assert seed == 3
    torch.manual_seed(3)
    assert torch.equal(inside, torch.rand(2))  # exactly torch.manual_seed(3) in the block
    torch.manual_seed(5)
    with torch_global_seed(3):
        torch.rand(2)
    assert torch.equal(torch.rand(2), expected)  # the caller's stream goes on untouched
    with pytest.raises(ValueError, match="seed"):
        with torch_global_seed(-1):
            pass
