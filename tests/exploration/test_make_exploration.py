"""make_exploration: types by name, class or dotted path; clear errors for bad names and kwargs."""
import gymnasium as gym
import pytest

from relayrl.exploration import EpsilonGreedy, Exploration, SoftQ, StochasticSampling, make_exploration

DISCRETE = gym.spaces.Discrete(3)


class Greedy(Exploration):
    def __init__(self, action_space, *, bonus: float = 0.0, **kwargs):
        super().__init__(action_space, **kwargs)
        self.bonus = bonus

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        actions = action_distribution.deterministic_sample()
        return actions, None


def test_by_name_with_kwargs_and_context():
    e = make_exploration({"type": "EpsilonGreedy", "initial_epsilon": 0.5, "epsilon_timesteps": 10}, DISCRETE,
                         worker_index=3, num_workers=4, policy_config={"normalize_actions": False})
    assert isinstance(e, EpsilonGreedy) and e.epsilon(0) == 0.5
    assert (e.worker_index, e.num_workers, e.normalize_actions) == (3, 4, False)


def test_empty_config_gives_the_default():
    assert type(make_exploration({}, DISCRETE)) is StochasticSampling
    assert type(make_exploration(None, DISCRETE, default={"type": "SoftQ", "temperature": 2.0})) is SoftQ
    # kwargs without "type" configure the default type
    e = make_exploration({"final_epsilon": 0.2}, DISCRETE, default={"type": "EpsilonGreedy"})
    assert isinstance(e, EpsilonGreedy) and e.epsilon(10**9) == pytest.approx(0.2)


@pytest.mark.parametrize("type_", [Greedy, f"{__name__}:Greedy", f"{__name__}.Greedy"])
def test_by_class_or_dotted_path(type_):
    e = make_exploration({"type": type_, "bonus": 1.5}, DISCRETE)
    assert type(e).__name__ == "Greedy" and e.bonus == 1.5


@pytest.mark.parametrize("path", ["relayrl.exploration.soft_q.SoftQ", "relayrl.exploration:SoftQ",
                                  "ray.rllib.utils.exploration.soft_q.SoftQ", "ray.rllib.utils.exploration.SoftQ"])
def test_full_paths_including_rllibs(path):
    assert type(make_exploration({"type": path}, DISCRETE)) is SoftQ


def test_unknown_name_suggests_the_closest():
    with pytest.raises(ValueError, match="Unknown exploration type 'EpsilonGready'.*Did you mean `EpsilonGreedy`"):
        make_exploration({"type": "EpsilonGready"}, DISCRETE)


def test_bad_kwarg_names_class_and_key():
    with pytest.raises(ValueError, match=r"EpsilonGreedy has no argument 'epsilon_timestep'.*Did you mean "
                                         r"`epsilon_timesteps`"):
        make_exploration({"type": "EpsilonGreedy", "epsilon_timestep": 10}, DISCRETE)
    with pytest.raises(ValueError, match="Greedy has no argument 'bonsu'"):
        make_exploration({"type": Greedy, "bonsu": 1}, DISCRETE)
    with pytest.raises(ValueError, match="must not set 'worker_index'"):
        make_exploration({"type": "Random", "worker_index": 1}, DISCRETE)


def test_bad_module_class_or_type():
    with pytest.raises(ValueError, match="cannot import module 'no_such_pkg.mod'"):
        make_exploration({"type": "no_such_pkg.mod:Thing"}, DISCRETE)
    with pytest.raises(ValueError, match="has no 'Greedyy'.*Did you mean `Greedy`"):
        make_exploration({"type": f"{__name__}:Greedyy"}, DISCRETE)
    with pytest.raises(TypeError, match="must subclass"):
        make_exploration({"type": dict}, DISCRETE)
    with pytest.raises(TypeError, match="type"):
        make_exploration({"type": 3}, DISCRETE)
