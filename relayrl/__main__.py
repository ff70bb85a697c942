"""`python -m relayrl ...`: the same as the `relayrl` command (run only as the program, never on import)."""
from relayrl.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
