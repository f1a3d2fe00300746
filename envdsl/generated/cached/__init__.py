"""Environments compiled by `envdsl.load`, importable by name from any process.

`envdsl.load` writes each generated module into a content-addressed cache directory
(`envdsl.generated.cached.<name>_<hash of the source>`) and imports it from there, so an environment
object, its rows and its snapshots pickle by reference like any other Python class: a `spawn`
worker or a Ray actor that unpickles one imports this package, whose path is the cache
directory, and finds the module by its name.  The directory is `$ENVDSL_CACHE_DIR`, else
`$XDG_CACHE_HOME/envdsl/generated`, else `~/.cache/envdsl/generated`.
"""

from envdsl.generated.module_cache import cache_dir, usable

# The package has no modules of its own: its path is the cache directory, while it is this
# user's alone (kept a list so that a later change of ENVDSL_CACHE_DIR can add the new
# directory, see envdsl.generated.module_cache.store).
__path__ = [str(cache_dir())] if usable(cache_dir()) else []
