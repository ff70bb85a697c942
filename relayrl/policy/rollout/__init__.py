"""Sampling with Policies: a small runner of its own (the RLModule EnvRunner is left untouched)."""
