"""`envdsl explore`: find spec bugs by running generated calls against the environment."""

from envdsl.explore.explorer import ExploreError, ExploreOptions, ExploreReport, Finding, explore

__all__ = ["ExploreError", "ExploreOptions", "ExploreReport", "Finding", "explore"]
