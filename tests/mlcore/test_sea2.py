"""Sea² pieces: the room, the frozen detector, GRPO's advantages and loss, the reward, the
explorer, and the errors."""

import copy
import math

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from mlcore.active import (
    ACTIONS,
    ActivePerceptionResult,
    ActiveRoomEnv,
    ForwardPolicy,
    FrozenPerception,
    PerceptionReward,
    PoseTransformerPolicy,
    RandomPolicy,
    RuleExplorer,
    Sea2Agent,
    TinyDetector,
    check_pose_env,
    evaluate_policies,
    grpo_advantages,
    grpo_loss,
    history_features,
    pretrained_detector,
    rollout,
    state_dict_hash,
)


@pytest.fixture(scope="module")
def env():
    return ActiveRoomEnv()


@pytest.fixture(scope="module")
def detector(env):
    # Small, fast detector: these tests check plumbing, not detection quality. One thread, as
    # conftest's per-test fixture is not yet active for a module fixture.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return pretrained_detector(env, n_views=800, n_steps=60, random_state=1)
    finally:
        torch.set_num_threads(threads)


def test_env_follows_gymnasium_api_and_rooms_are_seeded(env):
    check_env(ActiveRoomEnv(), skip_render_check=True)
    env.make_room(3)
    grid = env.grid.copy()
    env.make_room(3)
    assert np.array_equal(grid, env.grid)
    env.make_room(4)
    assert not np.array_equal(grid, env.grid)
    obs, info = env.reset(seed=0, options={"room": 3})
    assert obs["image"].shape == (3, 16, 16) and obs["image"].dtype == np.float32
    assert info["query"] in env.classes
    assert info["centre_class"] >= -1
    with pytest.warns(FutureWarning, match="centre_class"):
        assert info["center_class"] == info["centre_class"]  # the old spelling, for one release


def test_forward_into_a_wall_is_a_collision_and_keeps_the_pose():
    env = ActiveRoomEnv(n_occluders=0)
    env.reset(seed=0, options={"room": 0, "pose": (1, 1, 4)})  # heading 4: facing -x, the wall
    obs, reward, terminated, truncated, info = env.step(ACTIONS.index("forward"))
    assert info["collision"] and env.cell == (1, 1) and reward == 0.0 and not terminated
    _, _, terminated, _, _ = env.step(ACTIONS.index("stop"))
    assert terminated


def test_nuisance_region_shifts_the_image():
    shifted, clean = ActiveRoomEnv(nuisance=0.7), ActiveRoomEnv(nuisance=0.0)
    for e in (shifted, clean):
        e.make_room(0)
    i, j = np.floor(shifted.nuisance_centre).astype(int)
    i, j = np.clip([i, j], 1, shifted.room_size)
    free = np.argwhere(shifted.grid == 0)
    i, j = free[np.argmin(np.hypot(free[:, 0] + 0.5 - shifted.nuisance_centre[0],
                                   free[:, 1] + 0.5 - shifted.nuisance_centre[1]))]  # fmt: skip
    a, info = shifted.reset(seed=0, options={"room": 0, "pose": (i, j, 0)})
    b, _ = clean.reset(seed=0, options={"room": 0, "pose": (i, j, 0)})
    assert info["in_nuisance"]
    # Colour cast of 0.7 plus noise: far more than float rounding between two renders.
    assert np.abs(a["image"] - b["image"]).mean() > 0.05


def test_wrong_observation_space_is_a_clear_error():
    with pytest.raises(ValueError, match="Dict observation space"):
        check_pose_env(gym.make("CartPole-v1"))
    env = ActiveRoomEnv()
    env.observation_space = spaces.Dict(
        {"image": spaces.Box(0, 1, (16, 16, 3)), "pose": env.observation_space["pose"]}
    )
    with pytest.raises(ValueError, match=r"\(3, H, W\)"):
        check_pose_env(env)
    endless = ActiveRoomEnv()
    endless.max_steps = None
    with pytest.raises(ValueError, match="max_steps"):
        check_pose_env(endless)
    with pytest.raises(ValueError, match="Dict observation space"):
        rollout(RandomPolicy(), gym.make("CartPole-v1"), None, [(0, 0)])


def test_perception_is_frozen_copied_and_deterministic(env, detector):
    mine = TinyDetector(4)
    frozen = FrozenPerception(mine)
    assert all(p.requires_grad for p in mine.parameters())
    assert not any(p.requires_grad for p in frozen.parameters())
    frozen.train()
    assert not frozen.module.training
    again = pretrained_detector(env, n_views=800, n_steps=60, random_state=1)
    assert state_dict_hash(again) == state_dict_hash(detector)
    with pytest.raises(ValueError, match="query"):
        detector(torch.zeros(2, 3, 16, 16), 9)
    with pytest.raises(ValueError, match="finite"):
        detector(torch.full((1, 3, 16, 16), float("nan")), 0)


def test_advantages_are_normalised_per_group():
    rewards = torch.as_tensor(
        np.random.default_rng(0).normal(size=(5, 8)) * [[1], [10], [0.1], [3], [1e-3]]
    )
    adv = grpo_advantages(rewards.flatten(), 8).reshape(5, 8)
    # float64 rewards: the mean is zero to rounding, the std one to eps / std (<= 1e-5 here).
    assert adv.mean(dim=1).abs().max() < 1e-7
    assert (adv.std(dim=1, unbiased=False) - 1).abs().max() < 1e-4
    assert (adv[:4].std(dim=1, unbiased=False) - 1).abs().max() < 1e-6
    tied = grpo_advantages(torch.tensor([0.3] * 4 + [1.0, 2.0, 3.0, 4.0]), 4)
    assert torch.equal(tied[:4], torch.zeros(4))
    logp = torch.randn(8, 3, requires_grad=True)
    loss = grpo_loss(logp, logp.detach(), tied, logp_ref=logp.detach() + 0.1, beta=0.1)
    assert torch.isfinite(loss)
    with pytest.raises(ValueError, match="multiple of `group_size`"):
        grpo_advantages(torch.zeros(7), 4)
    with pytest.raises(ValueError, match="finite"):
        grpo_advantages(torch.tensor([0.0, float("nan")]), 2)


def _tiny_logp(weights, features, actions):
    return (features @ weights).log_softmax(-1).gather(-1, actions[..., None])[..., 0]


def test_gradient_at_theta_old_is_the_policy_gradient(device):
    gen = torch.Generator().manual_seed(0)
    features = torch.randn(6, 5, 7, generator=gen, dtype=torch.float64).to(device)
    actions = torch.randint(4, (6, 5), generator=gen).to(device)
    mask = torch.rand(6, 5, generator=gen).to(device) > 0.3
    adv = torch.randn(6, generator=gen, dtype=torch.float64).to(device)
    w = torch.randn(7, 4, generator=gen, dtype=torch.float64).to(device).requires_grad_(True)
    logp = _tiny_logp(w, features, actions)
    (grad,) = torch.autograd.grad(grpo_loss(logp, logp.detach(), adv, mask=mask), w)
    logp = _tiny_logp(w, features, actions)
    expected_loss = -(adv[:, None] * logp * mask).sum(1).mean()
    (expected,) = torch.autograd.grad(expected_loss, w)
    # float64 throughout: agreement to 1e-6 leaves a margin of ~1e9 over rounding.
    torch.testing.assert_close(grad, expected, atol=1e-6, rtol=0)
    assert grad.abs().max() > 1e-3


def test_kl_is_zero_at_the_reference_and_clipping_stops_the_gradient():
    gen = torch.Generator().manual_seed(1)
    logp = torch.randn(4, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    adv = torch.tensor([1.0, -1.0, 0.5, -0.5], dtype=torch.float64)
    plain = grpo_loss(logp, logp.detach(), adv)
    with_kl = grpo_loss(logp, logp.detach(), adv, logp_ref=logp.detach(), beta=0.5)
    assert with_kl.item() == pytest.approx(plain.item(), abs=1e-12)
    (g1,) = torch.autograd.grad(plain, logp)
    (g2,) = torch.autograd.grad(with_kl, logp)
    torch.testing.assert_close(g1, g2, atol=1e-12, rtol=0)
    # Ratio e^1 > 1 + 0.2 with a positive advantage: the clipped term is the minimum, flat.
    (g,) = torch.autograd.grad(grpo_loss(logp, logp.detach() - 1, adv.abs()), logp)
    assert torch.equal(g, torch.zeros_like(g))
    with pytest.raises(ValueError, match="logp_ref"):
        grpo_loss(logp, logp.detach(), adv, beta=0.1)


def test_history_features_pad_on_the_left():
    poses = torch.tensor([[0.1, 0.2, 1.0, 0.0], [0.1, 0.2, 0.0, 1.0]])
    rows = history_features(
        poses, torch.tensor([0.3, 0.6]), torch.tensor([1]), n_actions=4, length=5
    )
    assert rows.shape == (5, 10)
    assert torch.equal(rows[:3], torch.zeros(3, 10))
    assert rows[3, 0] == 1 and rows[4, 5] == pytest.approx(0.6)
    assert torch.equal(rows[4, 6:], torch.tensor([0.0, 1.0, 0.0, 0.0]))


def test_rule_explorer_sweeps_then_approaches(env, detector):
    data = rollout(RuleExplorer(), env, detector, [(r, r) for r in range(6)], greedy=True)
    turns = (ACTIONS.index("left"), ACTIONS.index("right"))
    assert (data.actions[:, :7] == ACTIONS.index("right")).all()
    for i in range(6):
        # the first decision after the sweep that is not a turn is taken facing the heading
        # where the sweep saw the highest confidence
        n = int(data.n_steps[i])
        t = next(t for t in range(7, n) if int(data.actions[i, t]) not in turns)
        sweep = data.histories[i, 7][-8:]
        best = sweep[int(sweep[:, 5].argmax()), 3:5]
        torch.testing.assert_close(data.histories[i, t][-1, 3:5], best)


def test_reward_aggregates(env, detector):
    data = rollout(
        RandomPolicy(random_state=0), env, detector, [(r, r) for r in range(8)], random_state=0
    )
    final = PerceptionReward("final")(data)
    torch.testing.assert_close(final, data.confidence.gather(1, data.n_steps[:, None])[:, 0])
    torch.testing.assert_close(PerceptionReward("gain")(data), final - data.confidence[:, 0])
    assert (PerceptionReward("max")(data) >= final).all()
    costly = PerceptionReward("final", lambda_step=0.1, lambda_col=1.0)(data)
    torch.testing.assert_close(costly, final - 0.1 * data.n_steps - data.collisions.sum(1))
    cons = PerceptionReward(lambda_geo=1.0).consistency(data)
    assert ((cons >= 0) & (cons <= 1)).all()
    with pytest.raises(ValueError, match="agg"):
        PerceptionReward("mean")


def test_rollout_follows_the_policy_device(env, detector, device):
    policy = PoseTransformerPolicy().to(device)
    perception = copy.deepcopy(detector).to(device)
    data = rollout(policy, env, perception, [(0, 1), (0, 1), (2, 3)], random_state=0)
    assert data.logp.device.type == device and data.images.device.type == device
    assert data.mask[:, 0].all() and (data.logp[data.mask] <= 0).all()
    # equal starts give equal start states (GRPO's groups)
    assert torch.equal(data.images[0, 0], data.images[1, 0])


def test_bad_policies_and_agent_inputs(env, detector):
    class Wrong(torch.nn.Module):
        def forward(self, image, history, query):
            return torch.zeros(len(image), 3)

    with pytest.raises(ValueError, match="logits of shape"):
        rollout(Wrong(), env, detector, [(0, 0)])
    with pytest.raises(TypeError, match="FrozenPerception"):
        rollout(ForwardPolicy(), env, TinyDetector(), [(0, 0)])
    with pytest.raises(TypeError, match="nn.Module"):
        Sea2Agent(lambda *a: None, detector)
    with pytest.raises(ValueError, match="rooms"):
        Sea2Agent(PoseTransformerPolicy(), detector).sft(env, [])
    with pytest.raises(ValueError, match="group_size"):
        Sea2Agent(PoseTransformerPolicy(), detector).grpo(env, [0], group_size=1)
    with pytest.raises(ValueError, match="query"):
        env.reset(options={"room": 0, "query": 99})
    with pytest.raises(ValueError, match="lr"):
        Sea2Agent(PoseTransformerPolicy(), detector).sft(env, [0], lr=0.0)
    with pytest.raises(ValueError, match="history_len"):
        rollout(ForwardPolicy(), env, detector, [(0, 0)], history_len=0)
    with pytest.raises(ValueError, match="patch"):
        PoseTransformerPolicy(patch=0)
    with pytest.raises(ValueError, match="n_classes"):
        TinyDetector(0)
    with pytest.raises(ValueError, match="episodes_per_room"):
        evaluate_policies({"f": ForwardPolicy()}, env, detector, [0], episodes_per_room=0)


def test_rollout_accepts_a_torch_generator(env, detector):
    starts = [(0, 1), (2, 3)]
    a = rollout(RandomPolicy(random_state=0), env, detector, starts, random_state=5)
    b = rollout(
        RandomPolicy(random_state=0),
        env,
        detector,
        starts,
        random_state=torch.Generator().manual_seed(5),
    )
    assert torch.equal(a.actions, b.actions)


def test_result_summary_uses_its_alpha():
    rng = np.random.default_rng(0)
    episodes = pd.DataFrame(
        {
            "seed": np.repeat([0, 1, 2], 4),
            "policy": np.tile(["a", "b"], 6),
            "final_confidence": rng.random(12),
            "correct": rng.random(12) > 0.5,
        }
    )
    result = ActivePerceptionResult(method="m", episodes=episodes, nobs=12)
    wide, narrow = result.tidy(0.01), result.tidy(0.5)
    assert (
        (wide["conf_high"] - wide["conf_low"]) > (narrow["conf_high"] - narrow["conf_low"])
    ).all()
    assert str(result.summary(0.01)) != str(result.summary(0.5))
    assert str(result.summary()) == str(result.summary(0.05))


def test_grpo_loss_refuses_what_would_be_a_silent_number():
    lp, adv = torch.zeros(2, 3), torch.ones(2)
    bad = torch.tensor([[0.0, -math.inf, 0.0], [0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="`logp` must be finite at every counted step"):
        grpo_loss(bad, lp, adv)  # was a finite loss, the -inf step silently weightless
    # a non-finite value at a masked (padding) step is fine: it is not counted
    mask = torch.tensor([[True, False, True], [True, True, True]])
    assert torch.isfinite(grpo_loss(bad, lp, adv, mask=mask))
    with pytest.raises(ValueError, match="`logp_old` must be finite"):
        grpo_loss(lp, bad.neg(), adv)
    with pytest.raises(ValueError, match="`logp` must not be empty"):
        grpo_loss(torch.zeros(0, 3), torch.zeros(0, 3), torch.zeros(0))  # was NaN
    with pytest.raises(ValueError, match="`logp_old` must have the shape of `logp`"):
        grpo_loss(lp, torch.zeros(2, 2), adv)  # was a raw broadcast error
    with pytest.raises(TypeError, match="`mask` must be a bool tensor"):
        grpo_loss(lp, lp, adv, mask=torch.ones(2, 3))
    with pytest.raises(ValueError, match="`mask` selects no step"):
        grpo_loss(lp, lp, adv, mask=torch.zeros(2, 3, dtype=torch.bool))


def test_render_view_and_history_features_check_their_inputs():
    from mlcore.active import render_view

    env = ActiveRoomEnv()
    env.reset(seed=0)
    image, _, _ = render_view(env.grid, 2.5, 2.5, 0.0)
    assert image.shape == (3, 16, 16)
    with pytest.raises(ValueError, match="`x` must be finite"):
        render_view(env.grid, math.nan, 2.5, 0.0)  # was a view from the corner cell
    with pytest.raises(ValueError, match="`y` must lie in"):
        render_view(env.grid, 2.5, -3.0, 0.0)
    with pytest.raises(TypeError, match="`grid` must be a non-empty 2-D array of integer"):
        render_view(env.grid.astype(float), 2.5, 2.5, 0.0)
    with pytest.raises(ValueError, match="`fov` must lie in"):
        render_view(env.grid, 2.5, 2.5, 0.0, fov=0.0)
    poses, conf, acts = torch.zeros(3, 4), torch.zeros(3), torch.zeros(2, dtype=torch.long)
    assert history_features(poses, conf, acts, n_actions=4, length=5).shape == (5, 10)
    with pytest.raises(ValueError, match="`length` must lie in"):
        history_features(poses, conf, acts, n_actions=4, length=-5)  # was a raw IndexError
    with pytest.raises(ValueError, match=r"`actions` must hold action indices in \[0, 3\]"):
        history_features(poses, conf, torch.tensor([0, 9]), n_actions=4, length=5)
    with pytest.raises(ValueError, match="`confidences` must be a 1-D"):
        history_features(poses, torch.zeros(2), acts, n_actions=4, length=5)
