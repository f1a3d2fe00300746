"""Loading generated modules: running generated source (modules), compiling a spec and loading
its environment class in memory (loader), and the content-addressed cache of generated modules
with the import namespace they live in (module_cache, cached).

Kept empty so that importing `envdsl.generated.modules` (stage 7 does) never imports the
pipeline back."""
