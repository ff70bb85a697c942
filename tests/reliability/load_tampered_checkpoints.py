"""Run as a script by test_checkpoint_attacks.py: load tampered checkpoints as a user would, all in this one
process, and print one JSON line: for each load, what happened and which modules it imported.

argv[1] is a JSON plan: {"warm_up": [load, ...], "loads": [load, ...]}, a load being {"name", "how", "path"} with
`how` one of "algorithm" (Algorithm.from_checkpoint(path), then train() and evaluate()), "policy"
(Policy.from_checkpoint(path), then an action) and "cli" (`python -m relayrl evaluate PATH --episodes 1`, run
in this process the way `python -m` runs it). The warm-up loads import what any load imports; each later load's
new modules are reported. A load that ends this process (os._exit) or hangs leaves no JSON line behind.
"""
import contextlib
import io
import json
import runpy
import sys


def load(how: str, path: str) -> dict:
    from relayrl import Algorithm
    from relayrl.checkpoints import CheckpointError
    from relayrl.policy.policy import Policy

    try:
        if how == "algorithm":
            algo = Algorithm.from_checkpoint(path)
            algo.train()
            algo.evaluate()
            algo.stop()
        elif how == "policy":
            policy = Policy.from_checkpoint(path)
            policy.compute_single_action(policy.observation_space.sample())
        else:
            return run_cli(["relayrl", "evaluate", path, "--episodes", "1"])
        return {"outcome": "loaded"}
    except CheckpointError as error:
        return {"outcome": "CheckpointError", "message": str(error)}
    except BaseException as error:  # noqa: B036 (SystemExit is what the probe looks for)
        return {"outcome": type(error).__name__, "message": str(error)}


def run_cli(argv: list) -> dict:
    out, err = io.StringIO(), io.StringIO()
    sys.argv = argv
    code = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_module("relayrl", run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        code = exit_.code
    except BaseException as error:  # noqa: B036 (an escaping exception is a traceback for the user)
        return {"outcome": type(error).__name__, "message": str(error), "stdout": out.getvalue(),
                "stderr": err.getvalue()}
    return {"outcome": "exit", "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> None:
    plan = json.loads(sys.argv[1])
    for item in plan["warm_up"]:
        load(item["how"], item["path"])
    results = {}
    for item in plan["loads"]:
        before = set(sys.modules)
        results[item["name"]] = {**load(item["how"], item["path"]), "new_modules": sorted(set(sys.modules) - before)}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
