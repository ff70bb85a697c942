"""Env wrappers: Atari preprocessing (relayrl applies it for `ALE/...` ids), video recording, and PettingZoo
envs as MultiAgentEnvs (pettingzoo_env.py)."""
