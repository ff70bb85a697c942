"""Porting tests run RLlib users' code with `ray.rllib` replaced by `relayrl`: inside each of them importing
`ray.rllib` (installed with ray) fails, so a pass shows the code ran on relayrl alone. Tests that start a child
process give it the same guard (`env_without_ray_rllib`)."""
import pytest

from relayrl.testing.no_ray_rllib import no_ray_rllib


@pytest.fixture(autouse=True)
def _refuse_ray_rllib():
    with no_ray_rllib():
        yield
