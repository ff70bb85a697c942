"""Env wrappers users apply themselves (Atari preprocessing); relayrl applies them for `ALE/...` ids."""
