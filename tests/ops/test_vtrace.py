"""V-trace equals the paper's definition (Espeholt et al. 2018, eq. 1), computed here term by term per row."""
import numpy as np
import pytest
import torch

from relayrl.ops.vtrace import (
    _reverse_discounted_sum_numpy,
    _reverse_discounted_sum_torch,
    chunks_to_time_major,
    vtrace,
    vtrace_on_chunks,
)


def _clip(x, threshold):
    return x if threshold is None else min(threshold, x)


def reference_vtrace(behaviour_logp, target_logp, rewards, discounts, values, bootstrap,
                     clip_rho=1.0, clip_pg_rho=1.0, clip_c=1.0):
    """One fragment (T steps), plain floats, straight from the definition (no recursion):

    v_s = V(x_s) + sum_{t=s}^{T-1} (prod_{i=s}^{t-1} discount_i c_i) rho_bar_t delta_t V,
    delta_t V = r_t + discount_t V(x_{t+1}) - V(x_t), V(x_T) = bootstrap.
    """
    T = len(rewards)
    rhos = [float(np.exp(target_logp[t] - behaviour_logp[t])) for t in range(T)]
    next_values = [float(values[t + 1]) if t + 1 < T else float(bootstrap) for t in range(T)]
    vs = []
    for s in range(T):
        total = float(values[s])
        for t in range(s, T):
            weight = 1.0
            for i in range(s, t):
                weight *= discounts[i] * _clip(rhos[i], clip_c)
            delta = rewards[t] + discounts[t] * next_values[t] - values[t]
            total += weight * _clip(rhos[t], clip_rho) * delta
        vs.append(total)
    next_vs = vs[1:] + [float(bootstrap)]
    pg = [_clip(rhos[s], clip_pg_rho) * (rewards[s] + discounts[s] * next_vs[s] - values[s]) for s in range(T)]
    return np.array(vs), np.array(pg)


def reference_batch(inputs, **clips):
    """Column b of every (T, B) input is fragment b; each is computed on its own."""
    b_logp, t_logp, rewards, discounts, values, bootstrap = [np.asarray(x, np.float64) for x in inputs]
    columns = [reference_vtrace(b_logp[:, b], t_logp[:, b], rewards[:, b], discounts[:, b], values[:, b],
                                bootstrap[b], **clips) for b in range(b_logp.shape[1])]
    return np.stack([c[0] for c in columns], 1), np.stack([c[1] for c in columns], 1)


def random_inputs(rng, T, B, *, gamma=0.95, terminal_prob=0.1, logp_scale=1.0, dtype=torch.float64):
    b_logp = rng.normal(size=(T, B)) * logp_scale - 1.0
    t_logp = b_logp + rng.normal(size=(T, B)) * logp_scale
    rewards = rng.normal(size=(T, B))
    discounts = gamma * (rng.random((T, B)) >= terminal_prob)
    values = rng.normal(size=(T, B))
    bootstrap = rng.normal(size=B)
    return [torch.tensor(x, dtype=dtype) for x in (b_logp, t_logp, rewards, discounts, values, bootstrap)]


def assert_matches_reference(inputs, rtol=1e-9, atol=1e-9, **clips):
    vs, pg = vtrace(*inputs, **{f"{k}_threshold": v for k, v in clips.items()})
    ref_vs, ref_pg = reference_batch(inputs, **clips)
    np.testing.assert_allclose(vs.numpy(), ref_vs, rtol=rtol, atol=atol)
    np.testing.assert_allclose(pg.numpy(), ref_pg, rtol=rtol, atol=atol)
    return vs, pg


def discounted_returns(rewards, discounts, bootstrap):
    """n-step (lambda = 1) returns of one fragment: sum_k (prod discounts) r, plus the discounted bootstrap."""
    T = len(rewards)
    out = np.zeros(T)
    for s in range(T):
        total, weight = 0.0, 1.0
        for t in range(s, T):
            total += weight * rewards[t]
            weight *= discounts[t]
        out[s] = total + weight * bootstrap
    return out


def test_on_policy_vs_are_discounted_returns():
    rng = np.random.default_rng(0)
    b_logp, _, rewards, discounts, values, bootstrap = random_inputs(rng, 12, 5)
    vs, pg = vtrace(b_logp, b_logp.clone(), rewards, discounts, values, bootstrap)
    for b in range(5):
        expected = discounted_returns(rewards[:, b].numpy(), discounts[:, b].numpy(), bootstrap[b].item())
        np.testing.assert_allclose(vs[:, b].numpy(), expected, rtol=1e-10, atol=1e-10)
    # rho = c = 1: v_s = r_s + discount_s v_{s+1}, so the advantage is the return minus the value.
    np.testing.assert_allclose(pg.numpy(), (vs - values).numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("clip_rho, clip_pg_rho, clip_c", [
    (1.0, 1.0, 1.0), (2.0, 1.0, 1.0), (1.0, 3.0, 0.5), (0.7, 1.5, 0.7), (None, None, None), (None, 1.0, 1.0),
])
def test_off_policy_matches_definition_with_clipping_active(clip_rho, clip_pg_rho, clip_c):
    rng = np.random.default_rng(1)
    inputs = random_inputs(rng, 15, 6, logp_scale=1.0)
    rhos = torch.exp(inputs[1] - inputs[0])
    for threshold in (clip_rho, clip_pg_rho, clip_c):  # the thresholds cut: rhos on both sides of each
        if threshold is not None:
            assert (rhos > threshold).any() and (rhos < threshold).any()
    assert_matches_reference(inputs, clip_rho=clip_rho, clip_pg_rho=clip_pg_rho, clip_c=clip_c)


def test_episode_end_inside_fragment_cuts_bootstrapping():
    rng = np.random.default_rng(2)
    b_logp, t_logp, rewards, _, values, bootstrap = random_inputs(rng, 10, 1)
    discounts = torch.full((10, 1), 0.9, dtype=torch.float64)
    discounts[4] = 0.0  # step 4 terminates; steps 5.. belong to the next episode
    vs, pg = assert_matches_reference([b_logp, t_logp, rewards, discounts, values, bootstrap])
    # Nothing after the terminal step reaches steps 0..4.
    changed = [x.clone() for x in (b_logp, t_logp, rewards, values)]
    for x in changed:
        x[5:] += 10.0
    vs2, pg2 = vtrace(*changed[:3], discounts, changed[3], bootstrap + 10.0)
    torch.testing.assert_close(vs2[:5], vs[:5])
    torch.testing.assert_close(pg2[:5], pg[:5])
    # The terminal step's target is its clipped-rho-weighted reward: v_4 = V_4 + rho_bar (r_4 - V_4).
    rho_bar = min(1.0, torch.exp(t_logp[4, 0] - b_logp[4, 0]).item())
    assert vs[4, 0].item() == pytest.approx(values[4, 0].item() + rho_bar * (rewards[4, 0] - values[4, 0]).item())


def test_truncated_fragment_bootstraps_from_the_next_observation():
    # Two steps, on-policy, gamma 0.9, not terminated: v_1 = r_1 + 0.9 V(x_2), v_0 = r_0 + 0.9 v_1.
    zeros = torch.zeros(2, 1, dtype=torch.float64)
    rewards = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
    discounts = torch.full((2, 1), 0.9, dtype=torch.float64)
    values = torch.tensor([[0.5], [-1.0]], dtype=torch.float64)
    vs, pg = vtrace(zeros, zeros, rewards, discounts, values, torch.tensor([10.0], dtype=torch.float64))
    assert vs[:, 0].tolist() == pytest.approx([1.0 + 0.9 * 11.0, 11.0])
    assert pg[:, 0].tolist() == pytest.approx([1.0 + 0.9 * 11.0 - 0.5, 11.0 + 1.0])
    # Off-policy: the bootstrap enters v_1 weighted by rho_bar_1 discount_1, and v_0 by
    # discount_0 c_0 rho_bar_1 discount_1.
    b_logp = torch.tensor([[0.0], [0.0]], dtype=torch.float64)
    t_logp = torch.log(torch.tensor([[0.5], [0.25]], dtype=torch.float64))
    low, _ = vtrace(b_logp, t_logp, rewards, discounts, values, torch.tensor([0.0], dtype=torch.float64))
    high, _ = vtrace(b_logp, t_logp, rewards, discounts, values, torch.tensor([1.0], dtype=torch.float64))
    assert (high - low)[:, 0].tolist() == pytest.approx([0.9 * 0.5 * 0.25 * 0.9, 0.25 * 0.9])


def test_clip_rho_and_clip_pg_rho_act_on_different_outputs():
    rng = np.random.default_rng(3)
    inputs = random_inputs(rng, 8, 4, logp_scale=1.5)
    base_vs, base_pg = vtrace(*inputs, clip_rho_threshold=1.0, clip_pg_rho_threshold=1.0)
    # clip_pg_rho only scales the advantages: vs unchanged, pg_adv rescaled by the clipped rhos' ratio.
    vs, pg = assert_matches_reference(inputs, clip_rho=1.0, clip_pg_rho=4.0, clip_c=1.0)
    torch.testing.assert_close(vs, base_vs)
    rhos = torch.exp(inputs[1] - inputs[0])
    torch.testing.assert_close(pg, base_pg * rhos.clamp(max=4.0) / rhos.clamp(max=1.0))
    # clip_rho changes the targets (and through them the advantages).
    vs, pg = assert_matches_reference(inputs, clip_rho=4.0, clip_pg_rho=1.0, clip_c=1.0)
    assert not torch.allclose(vs, base_vs)


def test_rows_with_different_termination_points_are_independent():
    rng = np.random.default_rng(4)
    T, B = 9, 5
    b_logp, t_logp, rewards, _, values, bootstrap = random_inputs(rng, T, B)
    discounts = torch.full((T, B), 0.97, dtype=torch.float64)
    for b, end in enumerate([None, 0, 3, 8, 5]):  # row 0 truncated, the others terminate at `end`
        if end is not None:
            discounts[end, b] = 0.0
    inputs = [b_logp, t_logp, rewards, discounts, values, bootstrap]
    vs, pg = assert_matches_reference(inputs)
    # Changing row 2 only changes row 2.
    changed = [x.clone() for x in inputs]
    for x in changed:
        x[..., 2] += 1.0
    vs2, pg2 = vtrace(*changed)
    keep = [0, 1, 3, 4]
    torch.testing.assert_close(vs2[:, keep], vs[:, keep])
    torch.testing.assert_close(pg2[:, keep], pg[:, keep])
    assert not torch.allclose(vs2[:, 2], vs[:, 2])


def test_float32_agrees_with_float64():
    rng = np.random.default_rng(5)
    inputs64 = random_inputs(rng, 50, 32)
    inputs32 = [x.float() for x in inputs64]
    vs64, pg64 = vtrace(*inputs64, clip_rho_threshold=2.0)
    vs32, pg32 = vtrace(*inputs32, clip_rho_threshold=2.0)
    assert vs32.dtype == pg32.dtype == torch.float32 and vs64.dtype == torch.float64
    np.testing.assert_allclose(vs32.numpy(), vs64.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pg32.numpy(), pg64.numpy(), rtol=1e-5, atol=1e-5)


def test_no_gradient_through_outputs_and_inputs_untouched():
    rng = np.random.default_rng(6)
    inputs = [x.requires_grad_() for x in random_inputs(rng, 6, 3)]
    before = [x.detach().clone() for x in inputs]
    vs, pg = vtrace(*inputs)
    assert not vs.requires_grad and not pg.requires_grad and vs.grad_fn is None and pg.grad_fn is None
    # The loss uses vs/pg as constants: gradients reach the network only through its own outputs.
    loss = (inputs[4] * pg).sum() + ((inputs[4] - vs) ** 2).sum()
    loss.backward()
    torch.testing.assert_close(inputs[4].grad, (pg - 2 * (vs - inputs[4])).detach())
    assert all(x.grad is None for i, x in enumerate(inputs) if i != 4)
    for x, y in zip(inputs, before):
        torch.testing.assert_close(x.detach(), y)


@pytest.mark.parametrize("seed", range(8))
def test_random_fragments_match_definition(seed):
    rng = np.random.default_rng(100 + seed)
    T, B = int(rng.integers(1, 20)), int(rng.integers(1, 7))
    gamma = float(rng.choice([0.0, 0.5, 0.99, 1.0]))
    clip_rho, clip_pg_rho, clip_c = (None if rng.random() < 0.2 else float(rng.uniform(0.3, 3.0)) for _ in range(3))
    inputs = random_inputs(rng, T, B, gamma=gamma, terminal_prob=float(rng.uniform(0, 0.5)),
                           logp_scale=float(rng.uniform(0.1, 2.0)))
    assert_matches_reference(inputs, rtol=1e-8, atol=1e-8, clip_rho=clip_rho, clip_pg_rho=clip_pg_rho, clip_c=clip_c)


def test_numpy_and_torch_recursions_agree():
    rng = np.random.default_rng(7)
    for dtype in (torch.float32, torch.float64):
        deltas = torch.tensor(rng.normal(size=(30, 16)), dtype=dtype)
        weights = torch.tensor(rng.random((30, 16)) * 0.99, dtype=dtype)
        torch.testing.assert_close(_reverse_discounted_sum_numpy(deltas.clone(), weights),
                                   _reverse_discounted_sum_torch(deltas.clone(), weights))


def test_trailing_batch_dims_and_empty_fragments():
    rng = np.random.default_rng(8)
    inputs = random_inputs(rng, 7, 6)
    shaped = [x.reshape(7, 2, 3) for x in inputs[:5]] + [inputs[5].reshape(2, 3)]
    vs, pg = vtrace(*inputs)
    vs3, pg3 = vtrace(*shaped)
    torch.testing.assert_close(vs3.reshape(7, 6), vs)
    torch.testing.assert_close(pg3.reshape(7, 6), pg)
    empty = torch.zeros(0, 4)
    assert vtrace(empty, empty, empty, empty, empty, torch.zeros(4)).vs.shape == (0, 4)


def test_rejects_mismatched_shapes():
    x = torch.zeros(5, 3)
    with pytest.raises(ValueError, match="time-major"):
        vtrace(x, x, x, x, torch.zeros(5, 4), torch.zeros(3))
    with pytest.raises(ValueError, match="bootstrap_value"):
        vtrace(x, x, x, x, x, torch.zeros(5))


def test_reproduces_rllib_toy_when_the_artificial_step_is_inside_the_fragment():
    # rllib_api_wave2.md §1.6: RLlib puts the appended step in the row with discount 0; r=[1,1,1,0],
    # V=[.5,.5,.5,2], gamma .9 gives vs=[2.71,1.90,1.00,0], pg_adv=[2.21,1.40,0.50,-2] (the bootstrap
    # value 2 cancels out of v_2). vtrace_on_chunks instead bootstraps from it: v_2 = 1 + .9 * 2.
    r = torch.tensor([[1.0], [1.0], [1.0], [0.0]])
    v = torch.tensor([[0.5], [0.5], [0.5], [2.0]])
    d = torch.tensor([[0.9], [0.9], [0.9], [0.0]])
    zeros = torch.zeros(4, 1)
    vs, pg = vtrace(zeros, zeros, r, d, v, torch.tensor([0.5]))
    assert vs[:, 0].tolist() == pytest.approx([2.71, 1.90, 1.00, 0.0])
    assert pg[:, 0].tolist() == pytest.approx([2.21, 1.40, 0.50, -2.0])
    mask = torch.tensor([True, True, True, False])
    vs, pg = vtrace_on_chunks(zeros[:, 0], zeros[:, 0], r[:, 0], v[:, 0], torch.zeros(4), mask, gamma=0.9)
    assert vs.tolist() == pytest.approx([1 + 0.9 * 3.52, 1 + 0.9 * 2.8, 2.8, 0.0])
    assert pg.tolist() == pytest.approx([1 + 0.9 * 3.52 - 0.5, 1 + 0.9 * 2.8 - 0.5, 2.3, 0.0])


def make_chunks(rng, chunks):
    """relayrl's flat layout for (length, terminated) chunks: real steps, then one artificial step
    (loss_mask False, terminateds True, reward 0, logps copied, value = bootstrap value)."""
    cols = {k: [] for k in ("b_logp", "t_logp", "rewards", "values", "terminateds", "loss_mask")}
    for length, terminated in chunks:
        b = rng.normal(size=length) - 1.0
        cols["b_logp"] += list(b) + [b[-1]]
        cols["t_logp"] += list(b + rng.normal(size=length)) + [0.0]
        cols["rewards"] += list(rng.normal(size=length)) + [0.0]
        cols["values"] += list(rng.normal(size=length + 1))
        cols["terminateds"] += [False] * (length - 1) + [terminated, True]
        cols["loss_mask"] += [True] * length + [False]
    return {k: torch.tensor(v) for k, v in cols.items()}


@pytest.mark.parametrize("seed", range(4))
def test_vtrace_on_chunks_matches_per_chunk_definition(seed):
    rng = np.random.default_rng(200 + seed)
    chunks = [(int(rng.integers(1, 15)), bool(rng.integers(0, 2))) for _ in range(10)] + [(1, True), (1, False)]
    c = make_chunks(rng, chunks)
    clips = dict(clip_rho=1.5, clip_pg_rho=0.8, clip_c=1.0)
    vs, pg = vtrace_on_chunks(c["b_logp"], c["t_logp"], c["rewards"], c["values"], c["terminateds"], c["loss_mask"],
                              gamma=0.95, **{f"{k}_threshold": v for k, v in clips.items()})
    assert vs.shape == pg.shape == c["values"].shape and vs.dtype == torch.float64
    start = 0
    for length, terminated in chunks:
        real = slice(start, start + length)
        discounts = np.full(length, 0.95)
        discounts[-1] *= not terminated
        ref_vs, ref_pg = reference_vtrace(c["b_logp"][real].numpy(), c["t_logp"][real].numpy(),
                                          c["rewards"][real].numpy(), discounts, c["values"][real].numpy(),
                                          c["values"][start + length].item(), **clips)
        np.testing.assert_allclose(vs[real].numpy(), ref_vs, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(pg[real].numpy(), ref_pg, rtol=1e-9, atol=1e-9)
        assert vs[start + length] == 0.0 and pg[start + length] == 0.0  # the artificial step
        start += length + 1


def test_chunks_to_time_major_layout_and_recurrent_padding():
    # Chunks of 3 and 1 steps, then zero padding rows as in a recurrent (sequences, max_seq_len) batch.
    mask = torch.tensor([True, True, True, False, True, False, False, False])
    index, valid, bootstrap_index = chunks_to_time_major(mask)
    assert index.tolist() == [[0, 4], [1, 5], [2, 5]]
    assert valid.tolist() == [[True, True], [True, False], [True, False]]
    assert bootstrap_index.tolist() == [3, 5]
    rng = np.random.default_rng(9)
    c = make_chunks(rng, [(3, False), (1, False)])
    pad = lambda x: torch.cat([x, torch.zeros(2, dtype=x.dtype)]).reshape(2, 4)  # noqa: E731
    flat = vtrace_on_chunks(c["b_logp"], c["t_logp"], c["rewards"], c["values"], c["terminateds"], c["loss_mask"],
                            gamma=0.9)
    padded = vtrace_on_chunks(*(pad(c[k]) for k in ("b_logp", "t_logp", "rewards", "values", "terminateds",
                                                      "loss_mask")), gamma=0.9)
    assert padded.vs.shape == (2, 4)
    torch.testing.assert_close(padded.vs.reshape(-1)[:6], flat.vs)
    torch.testing.assert_close(padded.pg_advantages.reshape(-1)[:6], flat.pg_advantages)


def test_chunks_need_a_closing_artificial_step():
    with pytest.raises(ValueError, match="artificial step"):
        chunks_to_time_major(torch.tensor([True, False, True]))
    index, valid, bootstrap_index = chunks_to_time_major(torch.zeros(0, dtype=torch.bool))
    assert index.shape == valid.shape == (0, 0) and bootstrap_index.shape == (0,)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(10)
    inputs = random_inputs(rng, 20, 8, dtype=torch.float32)
    cpu = vtrace(*inputs, clip_rho_threshold=2.0)
    gpu = vtrace(*(x.cuda() for x in inputs), clip_rho_threshold=2.0)
    assert gpu.vs.device.type == "cuda"
    torch.testing.assert_close(gpu.vs.cpu(), cpu.vs)
    torch.testing.assert_close(gpu.pg_advantages.cpu(), cpu.pg_advantages)
    c = make_chunks(rng, [(5, True), (3, False)])
    columns = [c[k] for k in ("b_logp", "t_logp", "rewards", "values", "terminateds", "loss_mask")]
    cpu = vtrace_on_chunks(*columns, gamma=0.9)
    gpu = vtrace_on_chunks(*(x.cuda() for x in columns), gamma=0.9)
    torch.testing.assert_close(gpu.vs.cpu(), cpu.vs)
    torch.testing.assert_close(gpu.pg_advantages.cpu(), cpu.pg_advantages)
