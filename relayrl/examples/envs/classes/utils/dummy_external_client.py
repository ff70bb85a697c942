"""RLlib's example simulator (`ray.rllib.examples.envs.classes.utils.dummy_external_client`), for relayrl.

`_dummy_external_client(port)` runs CartPole-v1 as the simulator of the EnvRunnerServerForExternalInference
on localhost:port, as RLlib's does: waits for the server, takes its config and weights, runs the module
itself and sends on-policy episode chunks. Unlike RLlib's it takes the config as data (no pickle), and
when the server goes away for good (training ended) it returns instead of raising.
"""
import logging

from relayrl.env.external.external_simulator import ExternalSimulator

logger = logging.getLogger("relayrl")


def _dummy_external_client(port: int = 5556) -> None:
    simulator = ExternalSimulator("CartPole-v1", port=port, connect_timeout_s=600.0, reconnect_timeout_s=5.0)
    try:
        simulator.run()
    except ConnectionError as error:
        logger.info("The example simulator stops: %s", error)
    finally:
        simulator.close()
