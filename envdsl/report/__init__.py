"""`envdsl report`: a static HTML site (or one JSON document) that shows specs instead of
printing them: an index of a batch, and per spec its schema and state diagrams, tools with their
effects, rules, tasks with their verification, coverage, diagnostics and rollout results.

document.py gathers the data (collect.py per spec, rollouts.py per trajectory file), diagrams.py
writes the Mermaid sources, site.py renders the pages from templates/ and ships assets/.
"""

from envdsl.report.document import build_report
from envdsl.report.site import write_site

__all__ = ["build_report", "write_site"]
