"""`python -m relayrl ...`: the same as the `relayrl` command."""
from relayrl.cli import main

raise SystemExit(main())
