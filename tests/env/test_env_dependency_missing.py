"""A gymnasium id whose extra is not installed: one line naming the pip command, not a traceback."""
import gymnasium as gym
import pytest

from relayrl.cli import main
from relayrl.env.registry import EnvDependencyMissing, make_env_creator

ENV_ID = "RelayrlTestNeedsExtra-v0"


def _needs_extra(**kwargs):
    raise gym.error.DependencyNotInstalled('Foo is not installed, run `pip install "gymnasium[foo]"`')


@pytest.fixture(autouse=True)
def needs_extra_env():
    gym.register(ENV_ID, entry_point=_needs_extra)
    yield
    gym.registry.pop(ENV_ID, None)


def test_the_error_names_the_env_and_the_pip_command():
    with pytest.raises(EnvDependencyMissing, match=rf"'{ENV_ID}' needs a package.*pip install \"gymnasium\[foo\]\""):
        make_env_creator(ENV_ID)({})


def test_the_cli_prints_one_line_and_exits_2(capsys):
    assert main(["train", "PPO", "--env", ENV_ID, "--stop-iters", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install" in err[0] and "Traceback" not in err[0]


def test_a_missing_box2d_also_names_relayrls_prebuilt_extra():
    def needs_box2d(**kwargs):
        raise gym.error.DependencyNotInstalled('Box2D is not installed, run `pip install "gymnasium[box2d]"`')

    gym.register("RelayrlTestNeedsBox2D-v0", entry_point=needs_box2d)
    try:
        with pytest.raises(EnvDependencyMissing, match=r'gymnasium\[box2d\].*pip install "relayrl\[box2d\]"'):
            make_env_creator("RelayrlTestNeedsBox2D-v0")({})
    finally:
        gym.registry.pop("RelayrlTestNeedsBox2D-v0", None)
