"""Helpers of the multi-agent algorithm tests: agent i -> module p<i>, module weights, bit-identical resume."""
import torch

from relayrl import Algorithm


def by_id(agent_id, episode, **kwargs):
    return f"p{agent_id}"


def weights(algo, module_id):
    return {k: v.clone() for k, v in algo.learner_group.get_module(module_id).state_dict().items()}


def same(a, b):
    return set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in a)


def assert_resume_is_bit_identical(config, tmp_path, *, env, loss_key: str) -> None:
    """Train, checkpoint, train on; restore and train the same iteration: same weights and losses per module."""
    algo = config.build_algo()
    algo.train()
    path = algo.save_to_path(tmp_path / "ckpt")
    first = algo.train()
    restored = Algorithm.from_checkpoint(path, config_overrides={"policy_mapping_fn": by_id, "env": env})
    second = restored.train()
    for module_id in ("p0", "p1"):
        assert same(weights(algo, module_id), weights(restored, module_id)), module_id
        assert first["learners"][module_id][loss_key] == second["learners"][module_id][loss_key]
    algo.stop()
    restored.stop()
