"""Wrappers that turn other libraries' envs into relayrl envs (PettingZoo: pettingzoo_env.py)."""
