"""The default pipelines built from a config, where user pieces go, and PPO's additions."""
import gymnasium as gym
import pytest

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.connectors import (
    ConnectorV2,
    EnvToModulePipeline,
    LearnerConnectorPipeline,
    ModuleToEnvPipeline,
)

ENV_TO_MODULE = ["AddObservationsFromEpisodesToBatch", "AddTimeDimToBatchAndZeroPad",
                 "AddStatesFromEpisodesToBatch", "BatchIndividualItems", "NumpyToTensor"]
MODULE_TO_ENV_HEAD = ["GetActions", "TensorToNumpy", "UnBatchToIndividualItems", "RemoveSingleTsTimeRankFromBatch"]
MODULE_TO_ENV_TAIL = ["NormalizeAndClipActions", "ListifyDataForVectorEnv"]
LEARNER = ["AddObservationsFromEpisodesToBatch", "AddColumnsFromEpisodesToTrainBatch", "AddTimeDimToBatchAndZeroPad",
           "AddStatesFromEpisodesToBatch", "BatchIndividualItems", "NumpyToTensor"]


class Spy(ConnectorV2):
    """Counts its calls; passes the batch through."""

    def __init__(self, label="", **kwargs):
        super().__init__(**kwargs)
        self.label = label
        self.calls = 0

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        self.calls += 1
        return batch


class SpyA(Spy):
    pass


class SpyB(Spy):
    pass


def names(pipe):
    return [c.name for c in pipe.connectors]


@pytest.fixture(scope="module")
def cartpole():
    env = gym.make("CartPole-v1")
    yield env
    env.close()


def config():
    return PPOConfig().environment("CartPole-v1")


def test_default_env_to_module_pipeline(cartpole):
    pipe = config().build_env_to_module_connector(env=cartpole)
    assert isinstance(pipe, EnvToModulePipeline)
    assert names(pipe) == ENV_TO_MODULE
    assert pipe.observation_space == cartpole.observation_space
    assert pipe.action_space == cartpole.action_space


def test_spaces_argument_takes_precedence_over_env(cartpole):
    box = gym.spaces.Box(-1, 1, (7,))
    spaces = {"__env_single__": (box, gym.spaces.Discrete(5))}
    pipe = config().build_env_to_module_connector(env=cartpole, spaces=spaces)
    assert pipe.observation_space == box and pipe.action_space == gym.spaces.Discrete(5)
    with pytest.raises(ValueError, match="Pass `env` or `spaces`"):
        config().build_env_to_module_connector()


def test_default_module_to_env_pipeline(cartpole):
    pipe = config().build_module_to_env_connector(env=cartpole)
    assert isinstance(pipe, ModuleToEnvPipeline)
    assert names(pipe) == MODULE_TO_ENV_HEAD + MODULE_TO_ENV_TAIL


def test_default_learner_pipeline(cartpole):
    pipe = config().build_learner_connector(cartpole.observation_space, cartpole.action_space)
    assert isinstance(pipe, LearnerConnectorPipeline)
    assert names(pipe) == LEARNER
    assert pipe.observation_space == cartpole.observation_space


def test_user_pieces_go_where_the_docs_say(cartpole):
    got = {}

    def env_to_module(env, spaces, device):
        got["env_to_module"] = (env, spaces, device)
        return [SpyA(), SpyB()]

    def module_to_env(env, spaces):
        got["module_to_env"] = (env, spaces)
        return SpyA()

    def learner(obs_space, act_space):
        got["learner"] = (obs_space, act_space)
        return [SpyB(), SpyA()]

    cfg = config().env_runners(env_to_module_connector=env_to_module, module_to_env_connector=module_to_env) \
        .learners(learner_connector=learner)
    assert names(cfg.build_env_to_module_connector(env=cartpole, device="cpu")) == ["SpyA", "SpyB"] + ENV_TO_MODULE
    assert got["env_to_module"] == (cartpole, None, "cpu")
    assert names(cfg.build_module_to_env_connector(env=cartpole)) == \
        MODULE_TO_ENV_HEAD + ["SpyA"] + MODULE_TO_ENV_TAIL
    assert got["module_to_env"] == (cartpole, None)
    assert names(cfg.build_learner_connector(cartpole.observation_space, cartpole.action_space)) == \
        ["SpyB", "SpyA"] + LEARNER
    assert got["learner"] == (cartpole.observation_space, cartpole.action_space)


def test_learner_connector_is_also_accepted_by_training(cartpole):
    cfg = config().training(learner_connector=lambda obs_space, act_space: SpyA())
    assert names(cfg.build_learner_connector(cartpole.observation_space, cartpole.action_space)) == ["SpyA"] + LEARNER


def test_without_default_pieces_only_the_user_pieces_remain(cartpole):
    cfg = (
        config()
        .env_runners(env_to_module_connector=lambda env, spaces, device: SpyA(),
                     module_to_env_connector=lambda env, spaces: [SpyA(), SpyB()],
                     add_default_connectors_to_env_to_module_pipeline=False,
                     add_default_connectors_to_module_to_env_pipeline=False)
        .learners(learner_connector=lambda obs_space, act_space: SpyB(),
                  add_default_connectors_to_learner_pipeline=False)
    )
    assert names(cfg.build_env_to_module_connector(env=cartpole)) == ["SpyA"]
    assert names(cfg.build_module_to_env_connector(env=cartpole)) == ["SpyA", "SpyB"]
    assert names(cfg.build_learner_connector(cartpole.observation_space, cartpole.action_space)) == ["SpyB"]
    empty = config().learners(add_default_connectors_to_learner_pipeline=False)
    assert len(empty.build_learner_connector(cartpole.observation_space, cartpole.action_space)) == 0


@pytest.mark.parametrize("bad", [None, "FrameStacking", 3, [SpyA(), object()]])
def test_a_factory_returning_a_non_connector_raises_type_error(cartpole, bad):
    cfg = config().env_runners(env_to_module_connector=lambda env, spaces, device: bad)
    with pytest.raises(TypeError, match="must return a ConnectorV2 piece or a list of them"):
        cfg.build_env_to_module_connector(env=cartpole)
    cfg = config().learners(learner_connector=lambda obs_space, act_space: bad)
    with pytest.raises(TypeError, match="ConnectorV2"):
        cfg.build_learner_connector(cartpole.observation_space, cartpole.action_space)


def test_older_one_argument_factories_still_work(cartpole):
    cfg = config().env_runners(env_to_module_connector=lambda env: SpyA())
    assert names(cfg.build_env_to_module_connector(env=cartpole))[0] == "SpyA"


# -- on a built PPO algorithm --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def algo():
    pieces = {"e2m": Spy("e2m"), "m2e": Spy("m2e"), "learner": Spy("learner")}
    cfg = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=1,  # one env: each of the 64 batch steps is a vector-env step
                     env_to_module_connector=lambda env, spaces, device: pieces["e2m"],
                     module_to_env_connector=lambda env, spaces: pieces["m2e"])
        .learners(learner_connector=lambda obs_space, act_space: pieces["learner"])
        .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[8]))
        .debugging(seed=0)
    )
    algo = cfg.build_algo()
    algo.pieces = pieces
    yield algo
    algo.stop()


def test_ppo_learner_pipeline_adds_one_ts_first_and_gae_last(algo):
    pipe = algo.learner_group._learner._learner_connector
    assert names(pipe) == ["AddOneTsToEpisodesAndTruncate", "Spy"] + LEARNER + ["GeneralAdvantageEstimation"]
    gae = pipe[-1]
    assert (gae.gamma, gae.lambda_) == (algo.config.gamma, algo.config.lambda_)


def test_ppo_env_runner_pipelines_hold_the_user_pieces(algo):
    runner = algo.env_runner
    assert names(runner._env_to_module) == ["Spy"] + ENV_TO_MODULE
    assert names(runner._module_to_env) == MODULE_TO_ENV_HEAD + ["Spy"] + MODULE_TO_ENV_TAIL
    assert runner._env_to_module[0] is algo.pieces["e2m"]


def test_user_pieces_are_called_during_training(algo):
    algo.train()
    pieces = algo.pieces
    assert pieces["learner"].calls == 1  # one update per training_step
    assert pieces["m2e"].calls >= 64  # one per vector-env step
    assert pieces["e2m"].calls >= pieces["m2e"].calls  # plus resets and terminal observations


def test_ppo_without_default_learner_pieces_adds_no_gae():
    cfg = PPOConfig().learners(learner_connector=lambda obs_space, act_space: SpyA(),
                               add_default_connectors_to_learner_pipeline=False)
    learner = cfg.build_learner(spaces={"__env_single__": (gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2))})
    assert names(learner._learner_connector) == ["SpyA"]
