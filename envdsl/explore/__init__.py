"""`envdsl explore`: find spec bugs by running generated calls against the environment."""

from envdsl.explore.explorer import ExploreOptions, ExploreReport, Finding, explore

__all__ = ["ExploreOptions", "ExploreReport", "Finding", "explore"]
