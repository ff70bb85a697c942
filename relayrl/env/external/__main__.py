"""`python -m relayrl.env.external ENV --port 5555`: run a gymnasium env as the simulator of an
EnvRunnerServerForExternalInference until the server goes away (or --max-env-steps are sent)."""
import argparse
import importlib
import json
import logging
import sys

from relayrl.env.external.server_settings import DEFAULT_PORT


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m relayrl.env.external", description=__doc__)
    parser.add_argument("env", nargs="?", default=None, help="a gymnasium id, a register_env name or 'module:Class' "
                        "(default: the env the server's config names)")
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="the server's port (env_config['port'] + the "
                        "EnvRunner's worker index)")
    parser.add_argument("--env-config", type=json.loads, default=None, help="the env's settings, as JSON")
    parser.add_argument("--seed", type=int, default=None, help="seed of the env and the action sampling (default: "
                        "the server config's)")
    parser.add_argument("--max-env-steps", type=int, default=None, help="stop after sending this many env steps")
    parser.add_argument("--trust", action="append", default=[], metavar="MODULE", help="import MODULE and let the "
                        "server's config name classes from it (your env, RLModule, connectors); repeatable")
    parser.add_argument("--connect-timeout-s", type=float, default=60.0, help="how long to wait for the server")
    parser.add_argument("--reconnect-timeout-s", type=float, default=60.0, help="how long to retry a broken "
                        "connection before giving up")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for module in args.trust:
        importlib.import_module(module)
    from relayrl.env.external.external_simulator import ExternalSimulator

    try:
        simulator = ExternalSimulator(args.env, host=args.host, port=args.port, env_config=args.env_config,
                                      trusted=args.trust, seed=args.seed, connect_timeout_s=args.connect_timeout_s,
                                      reconnect_timeout_s=args.reconnect_timeout_s)
    except (ConnectionError, ValueError) as error:  # no server, or a config / env that does not fit
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"connected to {args.host}:{args.port}", flush=True)
    try:
        simulator.run(args.max_env_steps)
        status = 0
    except ConnectionError as error:
        print(f"the server went away: {error}", flush=True)
        status = 0 if simulator.num_env_steps_sent else 1
    finally:
        simulator.close()
    print(f"env steps sent: {simulator.num_env_steps_sent}, lost: {simulator.num_env_steps_lost}, "
          f"reconnects: {simulator.num_reconnects}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
