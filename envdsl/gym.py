"""`envdsl.gym.make(spec, task=...)`: a gymnasium.Env (see envdsl.adapters.gym)."""

from envdsl.adapters.gym import ENV_ID, EnvdslEnv, JSONText, make

__all__ = ["ENV_ID", "EnvdslEnv", "JSONText", "make"]
