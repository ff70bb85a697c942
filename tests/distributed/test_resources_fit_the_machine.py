"""ray_setup.check_resources: on the local Ray instance relayrl started (it cannot grow), runners that ask for more
CPUs than it has share its free CPUs, with a warning (RLlib's cartpole_recording.py asks for 5 evaluation runners
on any machine); with no free CPU, or too few GPUs, it still refuses; a user's cluster only gets a warning."""
import pytest

from relayrl.distributed import ray_setup


class FakeRay:
    def __init__(self, total, free):
        self.total, self.free = total, free

    def is_initialized(self):
        return True

    def cluster_resources(self):
        return self.total

    def available_resources(self):
        return self.free


@pytest.fixture
def started_here(monkeypatch):
    monkeypatch.setattr(ray_setup, "_started_here", True)


def test_runners_beyond_relayrls_local_instance_share_its_free_cpus(started_here, caplog):
    with caplog.at_level("WARNING", logger="relayrl"):
        cpus = ray_setup.check_resources(FakeRay({"CPU": 2.0}, {"CPU": 2.0}), num_actors=5, num_cpus=1, num_gpus=0,
                                         what="evaluation EnvRunners")
    assert cpus == 0.4 and "0.4 CPU instead" in caplog.text
    assert ray_setup.check_resources(FakeRay({"CPU": 2.0}, {"CPU": 1.0}), num_actors=3, num_cpus=1, num_gpus=0,
                                     what="EnvRunners") == 0.3333


def test_runners_that_fit_keep_their_cpus(started_here):
    assert ray_setup.check_resources(FakeRay({"CPU": 2.0}, {"CPU": 2.0}), num_actors=2, num_cpus=1, num_gpus=0,
                                     what="EnvRunners") == 1


def test_no_free_cpu_or_too_few_gpus_is_refused(started_here):
    with pytest.raises(ValueError, match="5 actors x 1 CPU"):
        ray_setup.check_resources(FakeRay({"CPU": 2.0}, {"CPU": 0.0}), num_actors=5, num_cpus=1, num_gpus=0,
                                  what="EnvRunners")
    with pytest.raises(ValueError, match="GPU"):
        ray_setup.check_resources(FakeRay({"CPU": 2.0}, {"CPU": 2.0}), num_actors=1, num_cpus=1, num_gpus=1,
                                  what="EnvRunners")


def test_a_users_cluster_keeps_the_request(monkeypatch):
    monkeypatch.setattr(ray_setup, "_started_here", False)
    assert ray_setup.check_resources(FakeRay({"CPU": 2.0}, {"CPU": 2.0}), num_actors=5, num_cpus=1, num_gpus=0,
                                     what="EnvRunners") == 1
