"""The feature matrix: algorithms x env kinds x features, each cell either works or is refused at build time with a
clear error (REFUSED says which and why). test_feature_matrix.py runs the cells; docs/feature_matrix.md is the
table generated from this file (`python tests/integration/feature_matrix.py` writes it; a test checks it is
current).

Each cell is configured the way a user would: tiny nets and batches, FlattenObservations for the RLModule
algorithms on Discrete / Dict observations (RLlib's way; the Policy API one-hot encodes and flattens by
itself), small conv filters on images for the RLModule algorithms (the Policy API's default models are the MLP
over the flattened image and the LSTM; its strict config refuses conv_filters), one policy per agent for the
multi-agent envs.
"""
import os
import sys

ALGORITHMS = ("PPO", "DQN", "SAC", "IMPALA", "APPO", "PG")
ENV_KINDS = ("gym_id", "module_env_id", "register_env", "env_class", "discrete_obs", "dict_obs", "image_obs",
             "multi_agent", "pettingzoo")
FEATURES = ("train", "remote_runners", "evaluation", "lstm", "compute_single_action", "checkpoint_restore", "tune",
            "record", "mean_std_filter", "async_vector")
SLOW_FEATURES = ("remote_runners", "tune")  # Ray actors: slow-marked
ENV_KIND_TEXT = {
    "gym_id": "a gymnasium id (`CartPole-v1`, `Pendulum-v1`)",
    "module_env_id": "gymnasium's `module:EnvId` (`gymnasium.envs.classic_control:CartPole-v1`)",
    "register_env": "a `register_env(name, creator)` name",
    "env_class": "an env class wrapping `gym.make`",
    "discrete_obs": "Discrete observations",
    "dict_obs": "Dict observations",
    "image_obs": "image observations (12x12x1 uint8)",
    "multi_agent": "a MultiAgentEnv (`MultiAgentCartPole` / `MultiAgentPendulum`, a policy per agent)",
    "pettingzoo": "PettingZoo (`rps_v2`; a Box-action ParallelEnv for SAC)",
}
FEATURE_TEXT = {
    "train": "two `train()` iterations",
    "remote_runners": "2 remote EnvRunners (Ray)",
    "evaluation": "evaluation every iteration",
    "lstm": "the LSTM default model (`use_lstm`)",
    "compute_single_action": "`compute_single_action` on a raw observation",
    "checkpoint_restore": "save, a fresh algorithm, restore, train",
    "tune": "a Tune trial",
    "record": "`offline_data(output=DIR)` while training (episode rows), read back with relayrl's reader: as many "
              "steps as the runner counted (multi-agent: rows name agent and module)",
    "mean_std_filter": "`env_runners(observation_filter=\"MeanStdFilter\")`: trains (Discrete / Dict "
                       "observations: the filter follows the user's FlattenObservations; PG: the old stack's filter "
                       "per policy), and checkpoint/restore keeps the filter's statistics",
    "async_vector": "2 envs per runner with `gym_env_vectorize_mode=\"ASYNC\"` (sub-envs in worker processes)",
}
# The offline rows: BC on the Discrete-action version of each env kind, CQL on the Box-action one, each trained from a
# small `record` of that env kind (PPO's / SAC's episode rows) with evaluation in the env every iteration.
OFFLINE_ALGORITHMS = ("BC", "CQL")
OFFLINE_FEATURE = "train_from_record"
RECORDER = {"BC": "PPO", "CQL": "SAC"}
ALGORITHM_TEXT = {"PG": "seed 001's policy-gradient template (Policy API, `examples/policy_gradient_custom_policy.py`)"}

# (algorithm, env kind, feature) -> what the build-time error says; "*" matches any (the first match counts).
REFUSED = {
    ("SAC", "multi_agent", "lstm"): "Multi-agent SAC with use_lstm=True is not supported yet",
    ("SAC", "pettingzoo", "lstm"): "Multi-agent SAC with use_lstm=True is not supported yet",
    ("SAC", "*", "lstm"): "DefaultSACTorchRLModule has no LSTM",
    ("DQN", "multi_agent", "lstm"): "Multi-agent DQN with use_lstm=True is not supported yet",
    ("DQN", "pettingzoo", "lstm"): "Multi-agent DQN with use_lstm=True is not supported yet",
    # The Policy API's runners are built for its policies; recording is the RLModule EnvRunners' (offline/writer.py).
    ("PG", "*", "record"): "not available with the Policy API: the RLModule EnvRunners record episodes",
    # A MultiAgentVectorEnv steps agent dicts in the runner's process (env/runner_options.py): parallel multi-agent
    # sampling is num_env_runners > 0.
    ("*", "multi_agent", "async_vector"): "gym_env_vectorize_mode='ASYNC' is not available for multi-agent envs",
    ("*", "pettingzoo", "async_vector"): "gym_env_vectorize_mode='ASYNC' is not available for multi-agent envs",
    # The CNN scales images itself (connectors/env_to_module/observation_filter.py). (The Policy API's filters,
    # policy/rollout/observation_filters.py, normalise any observation its MLP takes, images too, as RLlib's old stack.)
    **{(algo, "image_obs", "mean_std_filter"): "Fix: observation_filter='NoFilter'"
       for algo in ALGORITHMS if algo != "PG"},
    # Reading multi-agent recordings is not supported yet (offline/reader.py: split them by module).
    ("BC", "multi_agent", "train_from_record"): "BC trains one module from single-agent offline data",
    ("BC", "pettingzoo", "train_from_record"): "BC trains one module from single-agent offline data",
    ("CQL", "multi_agent", "train_from_record"): "CQL trains one single-agent module from offline data",
    ("CQL", "pettingzoo", "train_from_record"): "CQL trains one single-agent module from offline data",
}
# Cells that fail today for a known reason being fixed elsewhere (the test expects them to fail, and fails when
# one starts to work, so the entry goes): (algorithm, env kind, feature) -> why.
PENDING = {}
REGISTERED = {True: "matrix-registered-cartpole", False: "matrix-registered-pendulum"}


def _lookup(table: dict, algo: str, env_kind: str, feature: str):
    for (a, e, f), value in table.items():
        if a in ("*", algo) and e in ("*", env_kind) and f in ("*", feature):
            return value
    return None


def refusal(algo: str, env_kind: str, feature: str):
    """The words of the build-time error this cell raises, or None: it works."""
    return _lookup(REFUSED, algo, env_kind, feature)


def pending(algo: str, env_kind: str, feature: str):
    """Why this cell fails today (PENDING), or None."""
    return _lookup(PENDING, algo, env_kind, feature)


# The (algorithm, env kind) pairs whose remote-runner and Tune cells CI runs (each a Tune trial on 2 Ray actors,
# 13-28 s on 2 cores; CI's budget for them is ~4 minutes): every algorithm but PPO on a gymnasium id; PPO on the env
# kinds that reach the actors differently (a register_env name, images, a MultiAgentEnv, PettingZoo through the
# flattening connector); the Policy API multi-agent.
SLOW_CROSS = tuple([(algo, "gym_id") for algo in ALGORITHMS if algo != "PPO"]
                   + [("PPO", kind) for kind in ("register_env", "image_obs", "multi_agent", "pettingzoo")]
                   + [("PG", "multi_agent")])


def slow_pairs():
    """The pairs the slow test runs: SLOW_CROSS, or all with RELAYRL_FULL_MATRIX=1."""
    if os.environ.get("RELAYRL_FULL_MATRIX"):
        return [(a, e) for a in ALGORITHMS for e in ENV_KINDS]
    return list(SLOW_CROSS)


def cells():
    return [(a, e, f) for a in ALGORITHMS for e in ENV_KINDS for f in FEATURES]


def offline_cells():
    return [(a, e, OFFLINE_FEATURE) for a in OFFLINE_ALGORITHMS for e in ENV_KINDS]


# -- building a cell's config ----------------------------------------------------------------------------------

def _algorithm_config(algo: str):
    if algo == "PG":
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
        from examples.policy_gradient_custom_policy import MyAlgo

        return MyAlgo.get_default_config().training(train_batch_size=64, model={"fcnet_hiddens": [8]})
    import relayrl

    config = getattr(relayrl, f"{algo}Config")().rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
    if algo == "PPO":
        return config.training(train_batch_size=64, minibatch_size=32, num_epochs=1)
    if algo in OFFLINE_ALGORITHMS:
        return config.training(train_batch_size=16)
    if algo in ("DQN", "SAC"):
        return config.training(train_batch_size=16, num_steps_sampled_before_learning_starts=32)
    return config.env_runners(rollout_fragment_length=16).training(train_batch_size=32)  # IMPALA, APPO


def _env(env_kind: str, discrete: bool):
    """(env, env_config, multi-agent)."""
    from relayrl.testing import matrix_envs

    gym_id = "CartPole-v1" if discrete else "Pendulum-v1"
    actions = "discrete" if discrete else "box"
    if env_kind == "gym_id":
        return gym_id, {}, False
    if env_kind == "module_env_id":
        return f"gymnasium.envs.classic_control:{gym_id}", {}, False
    if env_kind == "register_env":
        from relayrl import register_env

        register_env(REGISTERED[discrete], matrix_envs.make_registered_env)
        return REGISTERED[discrete], {"env_id": gym_id}, False
    if env_kind == "env_class":
        return matrix_envs.GymMakeEnv, {"env_id": gym_id}, False
    if env_kind in ("discrete_obs", "dict_obs", "image_obs"):
        return matrix_envs.SpacesKindEnv, {"obs": env_kind[:-4], "actions": actions}, False
    if env_kind == "multi_agent":
        from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole, MultiAgentPendulum

        return (MultiAgentCartPole if discrete else MultiAgentPendulum), {"num_agents": 2}, True
    return (matrix_envs.rps_parallel_env if discrete else matrix_envs.box_pursuit_env), {}, True


def make_config(algo: str, env_kind: str, *, lstm: bool = False, evaluation: bool = False, remote: int = 0,
                record=None, mean_std_filter: bool = False, async_vector: bool = False):
    """The cell's config; `record`: a folder to record to, `mean_std_filter` / `async_vector`: those features."""
    from relayrl.testing.matrix_envs import policy_of_agent

    config = _algorithm_config(algo)
    env, env_config, multi_agent = _env(env_kind, discrete=algo not in ("SAC", "CQL"))
    config.environment(env, env_config=env_config).env_runners(num_env_runners=remote, num_envs_per_env_runner=1)
    config.debugging(seed=0, logger_config={"type": "none"})
    config.reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=1)  # (asynchronous: until a sample)
    flatten = env_kind in ("discrete_obs", "dict_obs") or (env_kind == "pettingzoo" and algo not in ("SAC", "CQL"))
    if flatten and algo != "PG":
        config.env_runners(env_to_module_connector=_flatten_multi_agent if multi_agent else _flatten)
    model = {}
    if env_kind == "image_obs" and algo != "PG":  # (the Policy API has no conv net: see the docstring)
        model["conv_filters"] = [[4, [4, 4], 2], [8, [3, 3], 2]]
    if lstm:
        model.update(use_lstm=True, lstm_cell_size=8, max_seq_len=4)
    if model:
        if algo == "PG":
            config.training(model={"fcnet_hiddens": [8], **model})
        else:
            config.rl_module(model_config={**config.model_config, **model})
    if multi_agent:
        config.multi_agent(policies={"p0", "p1"}, policy_mapping_fn=policy_of_agent)
    if record is not None:
        config.offline_data(output=str(record))
    if mean_std_filter:
        config.env_runners(observation_filter="MeanStdFilter")
    if async_vector:
        config.env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="ASYNC")
    if evaluation:
        config.evaluation(evaluation_interval=1, evaluation_duration=10, evaluation_duration_unit="timesteps")
    return config


def make_offline_config(algo: str, env_kind: str, recording):
    """BC / CQL reading the episode rows recorded in `recording` (record_for_offline), evaluated every iteration."""
    return make_config(algo, env_kind, evaluation=True).offline_data(
        input_=str(recording), input_read_episodes=True, dataset_num_iters_per_learner=1)


def record_for_offline(algo: str, env_kind: str, recording) -> None:
    """A small recording for the offline `algo`: one train() of its RECORDER on the same env kind."""
    recorder = make_config(RECORDER[algo], env_kind, record=recording).build_algo()
    try:
        recorder.train()
    finally:
        recorder.stop()


def _flatten(env=None, spaces=None, device=None):
    from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations

    return FlattenObservations()


def _flatten_multi_agent(env=None, spaces=None, device=None):
    from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations

    return FlattenObservations(multi_agent=True)


def raw_observation(algo: str, env_kind: str, config):
    """(an observation as the env returns it, the policy id to ask) for compute_single_action."""
    from relayrl.env.env_context import EnvContext
    from relayrl.env.registry import make_env_creator

    env = make_env_creator(config.env)(EnvContext(dict(config.env_config), 0))
    try:
        obs, _ = env.reset(seed=0)
    finally:
        env.close()
    if isinstance(obs, dict) and config.is_multi_agent:
        agent = next(iter(obs))
        from relayrl.testing.matrix_envs import policy_of_agent

        return obs[agent], policy_of_agent(agent, None)
    return obs, "default_policy"


# -- the docs table ------------------------------------------------------------------------------------------

def table() -> str:
    """docs/feature_matrix.md's text."""
    lines = ["# The feature matrix", "",
             "Generated from `tests/integration/feature_matrix.py` (run it to rewrite this page; "
             "`tests/integration/test_feature_matrix.py` runs every cell and checks this page is current).", "",
             f"{len(ALGORITHMS)} algorithms x {len(ENV_KINDS)} env kinds x {len(FEATURES)} features = "
             f"{len(cells())} cells. Each cell trains (or does what its feature says) or is refused when the "
             "algorithm is built, with an error naming what is unsupported and what to do instead; no cell "
             f"crashes inside relayrl or ignores an option. Refused: {sum(refusal(*c) is not None for c in cells())}; "
             f"failing for a known reason being fixed: {sum(pending(*c) is not None for c in cells())}. "
             f"And {len(offline_cells())} offline cells (BC and CQL trained from a recording of each env kind, "
             f"below), {sum(refusal(*c) is not None for c in offline_cells())} of them refused.",
             "", "Env kinds:", ""]
    lines += [f"- `{kind}`: {text}" for kind, text in ENV_KIND_TEXT.items()]
    lines += ["", "Features:", ""] + [f"- `{f}`: {text}" for f, text in FEATURE_TEXT.items()]
    lines += ["", "Algorithms: PPO, DQN, SAC (on the Box-action version of each env kind), IMPALA, APPO and PG, "
              + ALGORITHM_TEXT["PG"] + ".", "",
              "The remote-runner and Tune cells run together, as one Tune trial on 2 remote EnvRunners. CI runs them "
              f"for {len(SLOW_CROSS)} pairs (every algorithm but PPO on a gymnasium id, PPO on a `register_env` "
              "name, images, multi-agent and PettingZoo, PG multi-agent); `works*` marks the pairs it leaves out for time, which "
              "`RELAYRL_FULL_MATRIX=1 pytest -m slow tests/integration` runs too.", ""]
    for algo in ALGORITHMS:
        lines += [f"## {algo}", "", "| env kind | " + " | ".join(FEATURES) + " |",
                  "|---|" + "---|" * len(FEATURES)]
        for env_kind in ENV_KINDS:
            marks = [_mark(algo, env_kind, f) for f in FEATURES]
            lines.append(f"| `{env_kind}` | " + " | ".join(marks) + " |")
        lines.append("")
    lines += ["## BC and CQL (offline)", "",
              f"`{OFFLINE_FEATURE}`: BC on the Discrete-action version of each env kind and CQL on the Box-action "
              "one, each trained (tiny nets, one update an iteration, two iterations) from the episode rows of one "
              f"`train()` of {RECORDER['BC']} / {RECORDER['CQL']} recording that env kind, evaluated in the env every "
              "iteration.", "", "| env kind | " + " | ".join(OFFLINE_ALGORITHMS) + " |",
              "|---|" + "---|" * len(OFFLINE_ALGORITHMS)]
    for env_kind in ENV_KINDS:
        lines.append(f"| `{env_kind}` | " + " | ".join(_mark(a, env_kind, OFFLINE_FEATURE) for a in OFFLINE_ALGORITHMS)
                     + " |")
    lines.append("")
    return "\n".join(lines)


def _mark(algo: str, env_kind: str, feature: str) -> str:
    words, why = refusal(algo, env_kind, feature), pending(algo, env_kind, feature)
    if why is not None:
        return f"fails ({why})"
    if words is not None:
        return f"refused: {words}"
    return "works*" if feature in SLOW_FEATURES and (algo, env_kind) not in SLOW_CROSS else "works"


DOCS_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "feature_matrix.md")

if __name__ == "__main__":
    with open(DOCS_PATH, "w") as f:
        f.write(table())
    print("wrote", os.path.normpath(DOCS_PATH), f"({len(cells())} cells)")
